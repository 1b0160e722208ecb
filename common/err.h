/*
 * The one error enum of fleetsim. 0 is success; details (message, RFC
 * error-tag) travel in the error record of whichever context failed.
 */
#ifndef FLEET_ERR_H
#define FLEET_ERR_H

enum fleet_err {
    FLEET_OK = 0,       /* success */
    FLEET_ERR_NOMEM,    /* allocation failed */
    FLEET_ERR_INVAL,    /* bad argument or malformed input */
    FLEET_ERR_LIMIT,    /* a named limit was hit (message size, nesting, ...) */
    FLEET_ERR_SYS,      /* a system call failed; errno says why */
    FLEET_ERR_NOTFOUND, /* the looked-up item does not exist */
    FLEET_ERR_PROTO,    /* the peer broke the protocol */
};

#endif
