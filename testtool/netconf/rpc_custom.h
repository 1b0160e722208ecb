/*
 * --rpc-config: custom RPC replies in OpenDaylight testtool's format
 * (<rpcs><rpc><input/><output/>...</rpc></rpcs>). A request matching an
 * input structurally gets that rpc's outputs in sequence per device, the
 * last one repeating; custom replies take precedence over built-in
 * operations.
 */
#ifndef FLEET_RPC_CUSTOM_H
#define FLEET_RPC_CUSTOM_H

#endif
