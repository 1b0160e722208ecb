/*
 * What the small libnetconf2 managers run by the Python tests (ch_client,
 * tls_client) share: one get-config round trip on an open session.
 */
#ifndef FLEET_ITEST_NC_H
#define FLEET_ITEST_NC_H

struct nc_session;

/** @brief get-config of running on @p s. @return 0 when the reply carried data. */
int itest_nc_get_config(struct nc_session *s);

#endif
