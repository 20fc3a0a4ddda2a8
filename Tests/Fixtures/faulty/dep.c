/* dep: the helper library libwhfixturedep.so that missing_dependency.so is
 * linked against. build.sh builds it, links missing_dependency.so against
 * it, then deletes it. Not a fixture itself. */
int wh_fixture_dep_value(void);

int wh_fixture_dep_value(void) { return 7; }
