/*
 * The chart library of the HTML pages (fleetsim's live page, fleetsim-stress
 * report): Chart.js as Debian's libjs-chart.js installs it, read at run time
 * and inlined into each page, so a page needs no network and the project
 * carries no copy of it.
 */
#ifndef FLEET_CHARTJS_H
#define FLEET_CHARTJS_H

#include <stddef.h>

/* Where Debian's libjs-chart.js puts the minified UMD build; FLEETSIM_CHARTJS overrides it. */
#define CHARTJS_DEFAULT_PATH "/usr/share/javascript/chart.js/chart.min.js"
/* Largest file taken as Chart.js (3.9 is 200 KB). */
#define CHARTJS_MAX_BYTES (4u * 1024u * 1024u)

/**
 * @brief Read Chart.js (FLEETSIM_CHARTJS or CHARTJS_DEFAULT_PATH).
 * @param[out] len Its length.
 * @param[out] err On failure, what is missing and how to get it (the package to install).
 * @return The text, malloc'd and NUL-terminated, or NULL.
 */
char *chartjs_load(size_t *len, char *err, size_t err_len);

#endif
