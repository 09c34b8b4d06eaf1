#!/bin/bash
# slurm-common.sh - settings shared by the Slurm test-cluster scripts (sourced after SPECTUNE_TESTHOST_DIR is set
# to the cluster's own base dir, so common.sh's paths - rootfs, ssh, host dirs - are the cluster's, not th1..th3's).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SL_NAMES=(sl1 sl2 sl3)                     # sl1 is the login/controller host
SL_INDEX_BASE=10                           # up-host.sh INDEX 11.. (th1..th3 use 1..)
SL_SUBNET=${SLURM_SUBNET:-10.250.90}
SL_HOST_IP=$SL_SUBNET.1                    # this machine on the bridge
sl_ip() { echo "$SL_SUBNET.$((10 + $1))"; } # node N (1-based) at .1N
SL_BRIDGE=br-st-slurm
SL_CLUSTER=spectune
SL_PARTITION=cpu
SL_KILLWAIT=5                              # seconds between a job's SIGTERM and SIGKILL
SL_MIN_JOB_AGE=3600                        # scontrol show job keeps a finished job this long
SL_NODE_CPUS=${SLURM_NODE_CPUS:-2}
SL_NODE_MEM_MB=${SLURM_NODE_MEM_MB:-3000}  # RealMemory of each node (what --mem is checked against)
SL_HOST_MEM_LIMIT=${SLURM_HOST_MEM_LIMIT:-4G}  # the node's own memory cgroup (whole container)
SL_MEM_ENFORCE=${SLURM_MEM_ENFORCE:-cgroup}
SL_READY_TIMEOUT=${SLURM_READY_TIMEOUT:-120}
SL_SHARED=/shared                          # one directory on every node (like a cluster's shared home): job output
SL_SHARED_DIR=$TH_BASE/shared              # ... which is this directory on this machine
SL_PACKAGES="curl sudo slurm-wlm slurmdbd munge mariadb-server"
SL_LAYER_COMMON=$TH_BASE/layer-common      # slurm.conf, cgroup.conf, slurmdbd.conf, munge key, MariaDB init
SL_LAYER_COMPUTE=$TH_BASE/layer-compute    # sl2, sl3: controller-only services masked
SL_JSON_FILE=$(dirname "${SL_ENV_FILE:-/var/lib/spectune-testhost/slurm.env}")/slurm.json
