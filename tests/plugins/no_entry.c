/* A shared object that exports no fbxp_plugin_entry. */
int fbxtest_not_an_entry(void);
int fbxtest_not_an_entry(void) { return 42; }
