#!/bin/sh
# Installs the Debian 12 packages fleetsim needs and builds it into build/.
# Safe to run again: apt-get skips what is installed and the build is incremental.
set -eu
cd "$(dirname "$0")/.."

packages="build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
  libyang2-dev libyang2-tools libyuma-base libssh-dev libssl-dev libsnmp-dev snmp
  libnetconf2-dev python3-ncclient python3-paramiko openssh-client libcmocka-dev procps netconfd yangcli snmpd snmptrapd
  libcurl4-openssl-dev libmicrohttpd-dev curl python3-prometheus-client libjs-chart.js chromium
  python3-kubernetes python3-yaml jq rsyslog rsyslog-openssl"
# rsyslog is the syslog collector of the tests (started unprivileged with its own configuration); it
# conflicts with syslog-ng, whose loggen the syslog bench runs unpacked from `apt-get download`.
# kubectl renders deploy/kubernetes in its test: Debian's kubernetes-client, unless a kubectl (another
# package's, e.g. Google Cloud's `kubectl`) is installed already.
command -v kubectl >/dev/null 2>&1 || packages="$packages kubernetes-client"

missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup: installing$missing"
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

# FLEETSIM_WERROR=ON in the environment makes warnings errors (CI sets it, so that scripts/test.sh, which
# builds build/ with it, does not build everything a second time); unset, build/ keeps what it had (off
# in a new folder).
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc \
    ${FLEETSIM_WERROR:+-DFLEETSIM_WERROR="$FLEETSIM_WERROR"} >/dev/null
cmake --build build -j "$(nproc)"
echo "setup: built build/fleetsim"
