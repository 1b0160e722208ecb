/*
 * Reading Chart.js; see chartjs.h.
 */
#include "chartjs.h"

#include "file_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
chartjs_load(size_t *len, char *err, size_t err_len)
{
    const char *path = getenv("FLEETSIM_CHARTJS");
    char *text;
    size_t n = 0;
    enum file_read_failure why;

    if (!path || !*path) {
        path = CHARTJS_DEFAULT_PATH;
    }
    why = file_read_all(path, CHARTJS_MAX_BYTES, &text, &n);
    if (why == FILE_READ_OPEN || why == FILE_READ_IO || why == FILE_READ_NOMEM) {
        snprintf(err, err_len,
                 "cannot read Chart.js at %s: %s (install Debian's libjs-chart.js, or set "
                 "FLEETSIM_CHARTJS to its chart.min.js)",
                 path, file_read_reason(why, 0));
        return NULL;
    }
    if (why == FILE_READ_TOO_LARGE || n == 0 || !strstr(text, "Chart")) {
        snprintf(err, err_len, "%s is not Chart.js (empty, over 4 MiB, or without \"Chart\")", path);
        free(text);
        return NULL;
    }
    /* A page inlines it inside <script>: a "</script" in it would end the element early. */
    if (strstr(text, "</script")) {
        snprintf(err, err_len, "%s holds \"</script\": it cannot be inlined", path);
        free(text);
        return NULL;
    }
    *len = n;
    return text;
}
