#!/usr/bin/env python3
"""Seeds for fuzz-sqlite and fuzz-merge: small SQLite files (512-byte pages) shaped like nsys
exports (nsys' column names and order, eventClass 67 rows, a session start, UUIDs without
"GPU-") and like k3sim databases (K3SIM_CAPTURE, K3SIM_DEVICE_MAP, GPU-projected NVTX). Written
by this script, not taken from anywhere. usage: fuzz/make-sqlite-seeds.py [FUZZ_DIR]"""
import os, sqlite3, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def make(path, script):
    if os.path.exists(path):
        os.unlink(path)
    c = sqlite3.connect(path)
    c.execute("PRAGMA page_size=512")
    c.executescript(script)
    c.commit()
    c.execute("VACUUM")
    c.close()
    with open(path, "rb") as f:
        return f.read()


NSYS = """
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (0,'void k<4>(float*)'),(1,'k'),(2,'cudaLaunchKernel_v7000'),(3,'step'),
 (4,'cudaLaunchKernel');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
 smCount INTEGER, uuid TEXT, cuDevice INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA A100', '0000:03:00.0', 108,
 '74e128b2-90b6-b409-07c8-33bee5ff6f88', 0);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1687813257637297504, '', '');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
 deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
 demangledName INTEGER, shortName INTEGER, gridX INTEGER, blockX INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100,150,0,1,7,11,302119223558144,0,1,66,128),
 (200,260,0,1,7,12,302119223558144,0,1,66,128);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
 streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER,
 srcDeviceId INTEGER, dstDeviceId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (300,320,0,7,13,302119223558144,4096,1,NULL,NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
 eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
 returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (90,95,0,302119224788637,11,2,0,NULL),
 (89,96,67,302119224788637,11,4,0,0),(190,195,0,302119224788637,12,2,0,NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
 rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
 endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES (80,400,59,NULL,NULL,NULL,NULL,302119224788637,NULL,3,0),
 (150,NULL,34,NULL,NULL,NULL,'mark',302119224788637,NULL,NULL,0);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES (302119223558144, 1230493, './saxpy');
"""

K3SIM = """
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1,'void deep_ep::internode_ll::dispatch<true>(void*)'),(2,'dispatch'),
 (3,'cudaLaunchKernel');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
 contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER,
 globalPid INTEGER, demangledName INTEGER, shortName INTEGER, mangledName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000,1500,%(dev)d,1,NULL,20,1,%(gpid)d,1,2,NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER,
 globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900,950,0,%(gtid)d,1,3,0,NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
 rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
 endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES (1000,1500,60,NULL,%(dev)d,NULL,'layer',%(gstream)d,NULL,NULL,
 117864012559616);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL PRIMARY KEY, name TEXT, busLocation TEXT,
 uuid TEXT, cuDevice INTEGER);
%(gpus)s
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES (%(gpid)d, %(pid)d, 'python3');
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT','k3sim');
CREATE TABLE K3SIM_CAPTURE (name TEXT NOT NULL PRIMARY KEY, value TEXT);
INSERT INTO K3SIM_CAPTURE VALUES ('host','%(host)s'),('rank','%(rank)d'),('pid','%(pid)d'),
 ('clock','%(clock)s');
CREATE TABLE K3SIM_DROPPED (source TEXT NOT NULL, deviceId INTEGER, contextId INTEGER,
 streamId INTEGER, count INTEGER NOT NULL);
INSERT INTO K3SIM_DROPPED VALUES ('cupti', %(dev)d, NULL, NULL, 3);
CREATE TABLE K3SIM_DEVICE_MAP (globalPid INTEGER NOT NULL, cudaId INTEGER NOT NULL,
 deviceId INTEGER NOT NULL, uuid TEXT, host TEXT, rank INTEGER);
%(devmap)s
"""


def k3sim(rank, pid, dev, host, clock, uuid, merged=False):
    gpus = ("INSERT INTO TARGET_INFO_GPU VALUES (%d, 'NVIDIA H200', NULL, %s, %d);"
            % (dev, "'%s'" % uuid if uuid else "NULL", dev))
    devmap = ("INSERT INTO K3SIM_DEVICE_MAP VALUES (%d, 0, %d, NULL, '%s', %d);"
              % (pid << 24, dev, host, rank)) if merged else ""
    return K3SIM % dict(rank=rank, pid=pid, dev=dev, host=host, clock=clock, gpus=gpus,
                        devmap=devmap, gpid=pid << 24, gtid=(pid << 24) | 1,
                        gstream=(pid << 24) | 20)


def main():
    sq = os.path.join(root, "corpus", "sqlite")
    mg = os.path.join(root, "corpus", "merge")
    os.makedirs(sq, exist_ok=True)
    os.makedirs(mg, exist_ok=True)
    tmp = os.path.join(sq, ".tmp.sqlite")
    seeds = {
        "nsys.sqlite": make(tmp, NSYS),
        "k3sim-rank0.sqlite": make(tmp, k3sim(0, 4242, 0, "node-a", "unix_epoch", None)),
        "k3sim-rank1.sqlite": make(tmp, k3sim(1, 4242, 0, "node-b", "unknown",
                                           "GPU-479a56ec-2ee0-f597-c784-b56f503f0971")),
        "k3sim-merged.sqlite": make(tmp, k3sim(2, 77, 1, "node-a", "unix_epoch", None, merged=True)),
    }
    os.unlink(tmp)
    for name, data in seeds.items():
        with open(os.path.join(sq, name), "wb") as f:
            f.write(data)
    # merge seeds: the first file's length (2 bytes, big-endian), the first file, the second
    pairs = [("nsys.sqlite", "k3sim-rank0.sqlite"), ("k3sim-rank0.sqlite", "k3sim-rank1.sqlite"),
             ("k3sim-merged.sqlite", "k3sim-rank0.sqlite")]
    for a, b in pairs:
        da, db = seeds[a], seeds[b]
        out = len(da).to_bytes(2, "big") + da + db
        with open(os.path.join(mg, "%s+%s.bin" % (a[:-7], b[:-7])), "wb") as f:
            f.write(out)


main()
