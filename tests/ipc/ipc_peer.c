/*
 * The peer's entry: what a test's second process runs (see ipc_support.h). Kept
 * apart from the tests so that CMake, which registers the TEST()s of the other
 * sources, does not register it as a test of its own.
 */
#include "ipc_support.h"

TEST(role_peer)
{
    return peer_main(env->device);
}
