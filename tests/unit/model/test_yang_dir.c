/*
 * Unit tests of the YANG folder scanner (testtool/model/yang_dir.c): the
 * first keyword after comments, names quoted or not, the newest revision of
 * a file and of a module across files named name.yang and name@rev.yang,
 * imports and includes, and a file that is neither module nor submodule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "yang_dir.h"

static void
write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void
test_read_head(void **state)
{
    char *name;
    char *rev;

    (void)state;
    assert_int_equal(ydir_read_head("// c\n/* block\n module x */\n  submodule \"s-1\" {\n"
                                    "  revision 2020-01-01; revision '2021-05-05' {}\n"
                                    "  revision 2019-01-01; revision-date 2030-01-01; }",
                                    &name, &rev),
                     2);
    assert_string_equal(name, "s-1");
    assert_string_equal(rev, "2021-05-05"); /* the newest, quoted or not; revision-date is not a revision */
    free(name);
    free(rev);
    assert_int_equal(ydir_read_head("module m { prefix m; }", &name, &rev), 1);
    assert_string_equal(name, "m");
    assert_null(rev);
    free(name);
    assert_int_equal(ydir_read_head("  container c {}", &name, &rev), 0);
    assert_null(name);
    assert_int_equal(ydir_read_head("modules x {}", &name, &rev), 0);
}

static void
test_scan_folder(void **state)
{
    char dir[] = "/tmp/test_yang_dir.XXXXXX";
    struct ydir d;
    char err[256] = "";
    long i;

    (void)state;
    assert_non_null(mkdtemp(dir));
    write_file(dir, "a@2020-01-01.yang", "module a { prefix a; revision 2020-01-01; }");
    write_file(dir, "a@2022-02-02.yang",
               "module a { prefix a; include a-sub; import b { prefix b; } revision 2022-02-02; "
               "revision 2020-01-01; }");
    write_file(dir, "a-sub.yang", "submodule a-sub { belongs-to a { prefix a; } import c { prefix c; } }");
    write_file(dir, "b.yang", "module b { prefix b; revision 2019-09-09; }");
    write_file(dir, "notes.txt", "not yang");
    assert_int_equal(ydir_scan(&d, dir, err, sizeof err), FLEET_OK);
    assert_int_equal(d.file_count, 4);
    assert_string_equal(d.files[0].file_name, "a-sub.yang"); /* sorted by file name */
    assert_true(d.files[0].is_submodule);
    assert_false(d.files[0].newest);
    i = ydir_find(&d, "a", NULL, 0);
    assert_int_equal(i, 2);
    assert_string_equal(d.files[i].file_name, "a@2022-02-02.yang");
    assert_true(d.files[i].newest);
    assert_false(d.files[1].newest);
    assert_int_equal(ydir_find(&d, "a", "2020-01-01", 0), 1);
    assert_int_equal(ydir_find(&d, "a", "2021-01-01", 0), -1);
    assert_int_equal(ydir_find(&d, "a-sub", NULL, 1), 0);
    assert_int_equal(ydir_find(&d, "a-sub", NULL, 0), -1);
    assert_true(ydir_depends_on(&d, 2, "a-sub"));
    assert_true(ydir_depends_on(&d, 2, "b"));
    assert_false(ydir_depends_on(&d, 2, "c"));
    assert_true(ydir_depends_on(&d, 0, "c"));
    assert_string_equal(d.files[3].text, "module b { prefix b; revision 2019-09-09; }");
    ydir_free(&d);

    /* a .yang file that is not YANG: one line naming it */
    write_file(dir, "z.yang", "<xml/>");
    assert_int_equal(ydir_scan(&d, dir, err, sizeof err), FLEET_ERR_INVAL);
    assert_non_null(strstr(err, "z.yang"));
    ydir_free(&d);
    assert_int_equal(ydir_scan(&d, "/nonexistent/folder", err, sizeof err), FLEET_ERR_INVAL);
    assert_non_null(strstr(err, "/nonexistent/folder"));
    ydir_free(&d);

    {
        const char *names[] = {
            "a@2020-01-01.yang", "a@2022-02-02.yang", "a-sub.yang", "b.yang", "notes.txt", "z.yang"};
        char path[512];
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            snprintf(path, sizeof path, "%s/%s", dir, names[k]);
            unlink(path);
        }
    }
    /* an empty folder (or one with no .yang file) is refused, naming it */
    write_file(dir, "README", "models are elsewhere");
    assert_int_equal(ydir_scan(&d, dir, err, sizeof err), FLEET_ERR_INVAL);
    assert_non_null(strstr(err, dir));
    assert_non_null(strstr(err, "no .yang file"));
    ydir_free(&d);
    {
        char path[512];
        snprintf(path, sizeof path, "%s/README", dir);
        unlink(path);
    }
    rmdir(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_head),
        cmocka_unit_test(test_scan_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
