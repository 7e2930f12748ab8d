/* The library hostile.runpath_check_sees_bad_entries links with a bad run path, so
 * that the checker is seen to flag one. */
int tpevent_runpath_fixture(void);
int tpevent_runpath_fixture(void)
{
    return 0;
}
