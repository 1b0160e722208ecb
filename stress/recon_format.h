/*
 * The forms reconcile's --received file can take (--format), on their own
 * so the option parser names them without depending on the joins.
 */
#ifndef STRESS_RECON_FORMAT_H
#define STRESS_RECON_FORMAT_H

/* The form of --received. */
enum recon_format {
    RECON_FMT_NOTIFY,    /* notify's manifest (JSON): reconcile.h's join */
    RECON_FMT_SYSLOG,    /* a syslog file, RFC 5424 or traditional lines (recv_syslog.h) */
    RECON_FMT_SNMPTRAPD, /* snmptrapd -Lf's log (recv_snmptrapd.h) */
    RECON_FMT_CSV,       /* channel,source,count rows (recv_csv.h) */
};

#endif
