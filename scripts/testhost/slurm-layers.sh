#!/bin/bash
# slurm-layers.sh - write the two small overlay layers stacked over the Slurm rootfs (plain files, nothing runs):
#   layer-common   every node: slurm.conf, cgroup.conf, the shared munge key, slurmdbd.conf, MariaDB's init SQL
#   layer-compute  sl2, sl3 only: slurmctld, slurmdbd and MariaDB masked (they run on sl1 alone)
# Rewritten on every slurm-up.sh (after the nodes are down), so a config change here needs no rootfs rebuild.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
export SPECTUNE_TESTHOST_DIR=${SPECTUNE_SLURM_DIR:-/var/lib/spectune-slurm}
source "$HERE/slurm-common.sh"
th_check_base
R=$TH_ROOTFS
[ -f "$R/.spectune-testhost-built" ] || th_die "no Slurm rootfs in $R: run slurm-up.sh"
for f in "$TH_BASE"/*/nspawn.pid; do [ -s "$f" ] && th_die "Slurm nodes are running on these layers: run slurm-down.sh first"; done

# uid:gid of a system user of the rootfs (the layers are owned as inside the nodes).
owner() { awk -F: -v u="$1" '$1 == u { print $3 ":" $4; f = 1 } END { exit !f }' "$R/etc/passwd" || th_die "no user $1 in $R"; }
SLURM=$(owner slurm); MUNGE=$(owner munge); MYSQL=$(owner mysql)

# The node list and addresses, one place for slurm.conf.
node_lines() {
    local i=0 n
    for n in "${SL_NAMES[@]}"; do
        i=$((i + 1))
        echo "NodeName=$n NodeAddr=$(sl_ip "$i") CPUs=$SL_NODE_CPUS RealMemory=$SL_NODE_MEM_MB State=UNKNOWN"
    done
}

# Memory enforcement: cgroup = task/cgroup in the node's own memory cgroup (the kernel OOM-kills, Slurm reports
# OUT_OF_MEMORY); overmemorykill = jobacct polling kills the step (Slurm reports FAILED), as in the reference setup.
mem_lines() {
    case "$SL_MEM_ENFORCE" in
        # jobacct_gather/cgroup would need the cpuacct controller, read-only inside a test host
        cgroup) printf 'TaskPlugin=task/cgroup\nJobAcctGatherType=jobacct_gather/linux\n' ;;
        overmemorykill) printf 'TaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/linux\nJobAcctGatherParams=OverMemoryKill\n' ;;
        *) th_die "SLURM_MEM_ENFORCE must be cgroup or overmemorykill, not '$SL_MEM_ENFORCE'" ;;
    esac
}

write_common() {
    local L=$SL_LAYER_COMMON
    rm -rf --one-file-system "$L"
    install -d "$L/etc/slurm" "$L/etc/munge" "$L/etc/mysql/mariadb.conf.d"
    install -d -o "${SLURM%:*}" -g "${SLURM#*:}" "$L/var/log/slurm" "$L/var/lib/slurm" "$L/var/lib/slurm/slurmctld" "$L/var/lib/slurm/slurmd"
    cat > "$L/etc/slurm/slurm.conf" <<EOT
# spectune Slurm test cluster (scripts/testhost/slurm-layers.sh): ${#SL_NAMES[@]} nodes, ${SL_NAMES[0]} is login + controller
ClusterName=$SL_CLUSTER
SlurmctldHost=${SL_NAMES[0]}($(sl_ip 1))
AuthType=auth/munge
MpiDefault=none
# linuxproc: the cgroup-v1 freezer is read-only inside a test host
ProctrackType=proctrack/linuxproc
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/lib/slurm/slurmd
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmUser=slurm
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# a job without --mem gets this much per CPU instead of the whole node
DefMemPerCPU=500
$(mem_lines)
JobAcctGatherFrequency=1
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=${SL_NAMES[0]}
# SIGTERM, then SIGKILL $SL_KILLWAIT s later: a server draining longer is cut (exit 0:9)
KillWait=$SL_KILLWAIT
MinJobAge=$SL_MIN_JOB_AGE
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
$(node_lines)
PartitionName=$SL_PARTITION Nodes=$(IFS=,; echo "${SL_NAMES[*]}") Default=YES MaxTime=INFINITE State=UP
EOT
    cat > "$L/etc/slurm/cgroup.conf" <<'EOT'
CgroupPlugin=cgroup/v1
ConstrainCores=no
ConstrainDevices=no
ConstrainRAMSpace=yes
ConstrainSwapSpace=no
EOT
    # slurmdbd reaches MariaDB over its unix socket as the slurm user (unix_socket auth): no password anywhere
    install -m 600 -o "${SLURM%:*}" -g "${SLURM#*:}" /dev/null "$L/etc/slurm/slurmdbd.conf"
    cat > "$L/etc/slurm/slurmdbd.conf" <<EOT
AuthType=auth/munge
DbdHost=localhost
SlurmUser=slurm
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StorageLoc=slurm_acct_db
EOT
    cat > "$L/etc/mysql/mariadb.conf.d/90-spectune-slurm.cnf" <<'EOT'
[mysqld]
init-file=/etc/mysql/spectune-slurm.sql
innodb_buffer_pool_size=64M
innodb_lock_wait_timeout=900
skip-networking
EOT
    cat > "$L/etc/mysql/spectune-slurm.sql" <<'EOT'
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED VIA unix_socket;
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
EOT
    [ -s "$TH_BASE/munge.key" ] || { umask 077; head -c 1024 /dev/urandom > "$TH_BASE/munge.key"; }
    install -d -m 700 -o "${MUNGE%:*}" -g "${MUNGE#*:}" "$L/etc/munge"
    install -m 400 -o "${MUNGE%:*}" -g "${MUNGE#*:}" "$TH_BASE/munge.key" "$L/etc/munge/munge.key"
    : "${MYSQL:?}"
}

# sl1: slurmctld needs slurmdbd answering at its start (else "no TRES from it", fatal); slurmdbd needs MariaDB.
# Restart= covers the moment between slurmdbd started and slurmdbd listening.
write_units() {
    local L=$SL_LAYER_COMMON u
    for u in slurmctld slurmd slurmdbd; do
        install -d "$L/etc/systemd/system/$u.service.d"
        { printf '[Unit]\nStartLimitIntervalSec=0\n'; [ $u != slurmctld ] || printf 'After=slurmdbd.service\n'
          printf '[Service]\nRestart=on-failure\nRestartSec=2\n'; } > "$L/etc/systemd/system/$u.service.d/10-spectune.conf"
    done
}

write_compute() {
    local L=$SL_LAYER_COMPUTE u
    rm -rf --one-file-system "$L"
    install -d "$L/etc/systemd/system"
    for u in slurmctld.service slurmdbd.service mariadb.service mysql.service mysqld.service; do
        ln -s /dev/null "$L/etc/systemd/system/$u"
    done
}

write_common
write_units
write_compute
