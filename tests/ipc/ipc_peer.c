/*
 * The peer's entry: what a test's second process runs (see ipc_support.h). Kept
 * apart from the tests so that CMake, which registers the TEST()s of the other
 * sources, does not register it as a test of its own.
 */
#include "ipc_support.h"

TEST(role_peer)
{
    return peer_main(env->device, false);
}

/* The same, with the shared page at PEER_PAGE_FD. Said by the role, not guessed from
 * whether the descriptor is open: a process may inherit one there (seen on a GPU
 * machine). */
TEST(role_peer_with_page)
{
    return peer_main(env->device, true);
}
