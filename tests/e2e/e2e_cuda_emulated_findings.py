#!/usr/bin/env python3
"""The third review's findings (issue 46, section 3) on the emulated GPU node: each case runs the real
gpuscale over the emulated CUDA libraries (e2e_cuda_emulated.py's environment and oracles) and asserts
what the fix changed, so it fails on the code before the fix. Every expected value comes from the
GPU model, the scenario (the fake NVML's GPUs) or a sysfs tree the case built, never from gpuscale's output.

Cases (label cuda-emulated):
  burn_layouts  finding 4: a burn-in's GEMM windows in fp8 (e4m3) and int8 at 2 ranks on the emulated H100
                (compute capability 9.0, where the emulated cuBLASLt's heuristic refuses fp8 and int8 unless
                A is transposed, as cuBLASLt's documentation says): every window valid and within 1% of the
                model's rate for its type. Before the fix the burn-in built NN products, so every window
                failed.
  nic_ties      finding 9: the NIC each GPU's traffic leaves by, at 4 ranks as 2 test hosts, each rank given
                one GPU by CUDA_VISIBLE_DEVICES as srun --gpus-per-task=1 does (so its CUDA ordinal is 0),
                on a sysfs tree built here (GPUSCALE_TEST_SYSFS_ROOT, kernels/sysfs_root.h): per host 2
                GPUs and 2 InfiniBand NICs on the ports of one PCIe switch, all equally near, in a random
                bus order (seed printed). Each rank's ranks[].device.details.nic is the port the tree gives
                its GPU by NCCL's rule (the active ports nearest it; of those tied, the GPU's index among
                the node's GPUs by bus id, an NVSwitch and a port that is down not counted), so the two
                GPUs of a host name different NICs; its PCI device id and NUMA node are the tree's; with
                NCCL_IB_HCA excluding one HCA both GPUs name the other; under NCCL_TOPO_FILE every choice
                is "unknown". Before the fix the tie was broken by the ordinal, 0 in every rank: both
                GPUs of a host named the same NIC.
"""
import os
import random
import shlex
import shutil
import sys

import e2e_common
import e2e_cuda_emulated as emu
from e2e_common import fail  # noqa: F401 (the cases' one way to fail)


def case_burn_layouts():
    m = emu.model()
    for dtype in ("fp8_e4m3", "int8"):
        doc = emu.run_gpuscale(f"burn_{dtype}", 2, ["--quick", "--duration", "4s", "--window", "2s", "--burn", "gemm",
                                                   "-d", dtype], emu.emulated_env(emu.scenario("two", 2)))
        rows = emu.all_valid(doc, f"burn_{dtype}")
        if len(rows) != 2 or any(r["benchmark"] != "burn.gemm" or r["params"]["dtype"] != dtype for r in rows):
            fail(f"burn-in {dtype}: windows {[(r['benchmark'], r['params']) for r in rows]}, expected 2 burn.gemm in {dtype}")
        for r in rows:
            emu.within(f"burn.gemm {r['params']}", r["aggregate"], emu.gemm_oracle_tflops(m, dtype) * r["gpu_count"])
    print("ok: fp8 and int8 burn-in windows valid (TN, the layout cuBLASLt needs on compute capability 9.0) and within 1%")


# --- nic_ties (finding 9): a node's PCI tree as sysfs shows it, built in the workdir ---
# Documentation/ABI/testing/sysfs-bus-pci and Documentation/PCI/sysfs-pci.rst (the Linux kernel): every
# PCI function is a folder devices/pci<domain>:<bus>/<bridge>/.../<domain>:<bus>:<dev>.<fn>, nested
# under the bridges it sits behind, with read-only files `vendor`, `device`, `class` ("0x" and the
# class code, 6 hex digits), `numa_node` ("the NUMA node to which the PCI device is attached, or -1")
# and `local_cpulist`; bus/pci/devices/<id> is a link to that folder.
# Documentation/ABI/stable/sysfs-class-infiniband: class/infiniband/<device>/device links to the HCA's
# PCI function; ports/<port-num>/state is "Port state (DOWN, INIT, ARMED, ACTIVE or ACTIVE_DEFER)",
# written by drivers/infiniband/core/sysfs.c as "<number>: <name>" ("4: ACTIVE"); link_layer is
# "InfiniBand" or "Ethernet".
NVIDIA, MELLANOX, BROADCOM, INTEL = "0x10de", "0x15b3", "0x1000", "0x8086"  # PCI-SIG vendor ids
# PCI Code and ID Assignment Specification: 03/02 3D controller (a data-centre GPU), 06/04 PCI-to-PCI
# bridge, 06/80 other bridge (an NVSwitch), 02/07 InfiniBand controller.
GPU_CLASS, BRIDGE_CLASS, NVSWITCH_CLASS, IB_CLASS = "0x030200", "0x060400", "0x068000", "0x020700"
H100_SXM_DEVICE = "0x2330"  # peaks/gpus.json's H100 SXM5 80GB, the emulated model's GPU


def write_files(folder, files):
    os.makedirs(folder, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text + "\n")


def pci_function(root, parent, bus, vendor, klass, numa, cpus, device="0x0000"):
    """The function at `bus` ("0000:1b:00.0") below the folder `parent`, its files, and its link in
    bus/pci/devices (relative, as the kernel's): its folder."""
    folder = os.path.join(parent, bus)
    write_files(folder, {"vendor": vendor, "device": device, "class": klass, "numa_node": str(numa),
                         "local_cpulist": cpus})
    link = os.path.join(root, "bus/pci/devices", bus)
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(os.path.relpath(folder, os.path.dirname(link)), link)
    return folder


def ib_port(root, hca, pci_folder, port, state):
    """Port `port` of HCA `hca` at `pci_folder`: the HCA's folder under its PCI function, linked from
    class/infiniband, its `device` link up to the function, as the kernel lays them out."""
    folder = os.path.join(pci_folder, "infiniband", hca)
    if not os.path.isdir(folder):
        os.makedirs(folder)
        os.symlink("../..", os.path.join(folder, "device"))
        link = os.path.join(root, "class/infiniband", hca)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(os.path.relpath(folder, os.path.dirname(link)), link)
    write_files(os.path.join(folder, "ports", str(port)), {"state": state, "link_layer": "InfiniBand"})


def cpulist(cpus):
    return ",".join(str(c) for c in sorted(cpus))


def sysfs_tree(rng, numa):
    """A node whose PCIe switch holds 2 GPUs and 2 HCAs, one to a downstream port, so every GPU is 4
    hops from every HCA and NCCL's tie rule decides; the slots, the HCAs' names and which HCA has a
    second port that is down drawn from `rng`; an NVSwitch on a lower bus than the GPUs. The local
    cores are this process's own, so the rank's binding keeps them. Returns (root, [GPU 0's and GPU
    1's bus ids, as the scenario lists them])."""
    root = e2e_common.work("nic_ties_sysfs")
    shutil.rmtree(root, ignore_errors=True)
    cpus = cpulist(os.sched_getaffinity(0))
    rc = rng.randrange(0x20, 0xe0)  # the root complex's bus; the switch's buses follow it
    parent = os.path.join(root, "devices", f"pci0000:{rc:02x}")
    for bus, vendor in ((f"0000:{rc:02x}:01.0", INTEL), (f"0000:{rc + 1:02x}:00.0", BROADCOM)):  # root port, switch
        parent = pci_function(root, parent, bus, vendor, BRIDGE_CLASS, numa, cpus)
    slots = rng.sample(range(4), 4)  # GPU 0, GPU 1, HCA a, HCA b
    ends = []
    for slot in slots:
        down = pci_function(root, parent, f"0000:{rc + 2:02x}:{slot:02x}.0", BROADCOM, BRIDGE_CLASS, numa, cpus)
        ends.append((down, f"0000:{rc + 3 + slot:02x}:00.0"))
    gpus = [pci_function(root, d, b, NVIDIA, GPU_CLASS, numa, cpus, H100_SXM_DEVICE) for d, b in ends[:2]]
    hcas = [pci_function(root, d, b, MELLANOX, IB_CLASS, numa, cpus) for d, b in ends[2:]]
    names = rng.sample(["mlx5_0", "mlx5_1"], 2)
    for name, folder in zip(names, hcas):
        ib_port(root, name, folder, 1, "4: ACTIVE")
    down = rng.randrange(2)
    ib_port(root, names[down], hcas[down], 2, "1: DOWN")
    sw = pci_function(root, os.path.join(root, "devices", "pci0000:01"), "0000:01:01.0", INTEL, BRIDGE_CLASS, numa, cpus)
    pci_function(root, sw, "0000:02:00.0", NVIDIA, NVSWITCH_CLASS, numa, cpus)
    return root, [os.path.basename(g) for g in gpus]


def read(path):
    with open(path) as f:
        return f.readline().strip()


def pci_hops(a, b):
    """Steps between two folders of the PCI tree: up from one to their common bridge, down to the other."""
    x, y = a.split("/"), b.split("/")
    common = len(os.path.commonprefix([x, y]))
    return len(x) + len(y) - 2 * common


def nic_oracle(root, bus, excluded=None):
    """The port NCCL gives the GPU at `bus`, read back from the tree (docs/fleet.md, "Which NIC"): of
    the active ports (not of HCA `excluded`: NCCL_IB_HCA=^=NAME), those nearest the GPU in the PCI tree;
    of those, sorted by HCA and port, the GPU's index (among the node's NVIDIA 3D and display
    controllers, by bus id) mod their count. Returns ((hca, port, the HCA's bus id), how many tied, the
    GPU's index)."""
    devices = os.path.join(root, "bus/pci/devices")
    gpus = sorted(d for d in os.listdir(devices) if read(os.path.join(devices, d, "vendor")) == NVIDIA
                  and read(os.path.join(devices, d, "class"))[:6] in ("0x0300", "0x0302"))
    mine = os.path.realpath(os.path.join(devices, bus))
    ports = []
    ib = os.path.join(root, "class/infiniband")
    for hca in set(os.listdir(ib)) - {excluded}:
        pci = os.path.realpath(os.path.join(ib, hca, "device"))
        for port in os.listdir(os.path.join(ib, hca, "ports")):
            if read(os.path.join(ib, hca, "ports", port, "state")).endswith("ACTIVE"):
                ports.append((pci_hops(mine, pci), hca, int(port), os.path.basename(pci)))
    nearest = min(p[0] for p in ports)
    tied = sorted(p[1:] for p in ports if p[0] == nearest)
    index = gpus.index(bus)
    return tied[index % len(tied)], len(tied), index


def gpus_per_task_launcher(gpus_per_host):
    """A script mpirun starts in gpuscale's place: each rank sees one GPU of its test host
    (CUDA_VISIBLE_DEVICES=rank mod gpus_per_host, the hosts' ranks in blocks), as under srun
    --gpus-per-task=1, so every rank's CUDA ordinal is 0, the ordinal the NIC tie was broken by before
    the fix."""
    path = e2e_common.work("gpus_per_task.sh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f"CUDA_VISIBLE_DEVICES=$((OMPI_COMM_WORLD_RANK % {gpus_per_host})) exec {shlex.quote(emu.ARGS.gpuscale)} \"$@\"\n")
    os.chmod(path, 0o755)
    return path


def rank_details(doc, ranks):
    """Each rank's device details from the result file's rank identities."""
    ids = sorted(doc["ranks"], key=lambda r: r["rank"])
    if [r["rank"] for r in ids] != list(range(ranks)):
        fail(f"rank identities: {[r['rank'] for r in ids]}, expected 0..{ranks - 1}")
    return [(r["host"], r["device"]["index"], r["device"]["details"]) for r in ids]


def check_nic(rank, details, root, bus, ties=2, excluded=None):
    """Rank `rank`'s details name the port nic_oracle gives its GPU, of `ties` equally near."""
    (hca, port, hca_bus), tied, index = nic_oracle(root, bus, excluded)
    if tied != ties:
        fail(f"the tree gives GPU {bus} {tied} ports equally near, not the {ties} this run is about")
    nic = details.get("nic")
    got = nic and (nic["device"], nic["port"], nic["pci_bus_id"])
    if got != (hca, port, hca_bus):
        fail(f"rank {rank} (GPU {bus}, index {index} among the node's GPUs by bus id): NIC {got}, the tree gives "
             f"{(hca, port, hca_bus)} of the {tied} equally near ({details.get('nic_note') or nic['rule']})")
    return hca, index


def check_nic_rule(rank, details, index):
    """The recorded rule names the index the tie was broken by."""
    rule = details["nic"]["rule"]
    if f"by bus id, {index}, mod 2" not in rule:
        fail(f"rank {rank}: the NIC's rule does not name GPU index {index} among the node's GPUs mod 2: {rule}")


def nic_ties_run(name, ranks, hosts, root, bus_ids, extra=None):
    env = emu.emulated_env(emu.scenario(name, [{"pci_bus_id": "0000" + b.upper()} for b in bus_ids]),
                           extra={"GPUSCALE_TEST_HOSTS": ",".join(hosts), "GPUSCALE_TEST_SYSFS_ROOT": root, **(extra or {})})
    doc = emu.run_gpuscale(name, ranks, ["--quick", "--benchmarks", "all_reduce", "-b", "1M", "-e", "1M", "--ops", "sum",
                                         "-d", "fp32", "--placement", "out-of-place"], env,
                           program=gpus_per_task_launcher(len(bus_ids)))
    emu.all_valid(doc, name)
    return rank_details(doc, ranks)


def check_rank_identity(rank, host, ordinal, details, bus, numa):
    """The rank's GPU is the one its launcher gave it, at CUDA ordinal 0, with the tree's PCI device id
    and NUMA node (read through GPUSCALE_TEST_SYSFS_ROOT, not /sys)."""
    if ordinal != 0 or details["pci_bus_id"].lower() != bus:
        fail(f"rank {rank} ({host}): GPU {details['pci_bus_id']} at ordinal {ordinal}, expected {bus} at ordinal 0")
    if details.get("pci_device_id") != H100_SXM_DEVICE:
        fail(f"rank {rank}: PCI device id {details.get('pci_device_id')}, the tree's is {H100_SXM_DEVICE}")
    if f"NUMA node {numa} " not in details["cpu_binding"]["rule"]:
        fail(f"rank {rank}: CPU binding {details['cpu_binding']['rule']!r} does not name the tree's NUMA node {numa}")


def check_ties(root, bus_ids, numa):
    """4 ranks as 2 hosts: each rank's NIC the tree's for its GPU, the 2 GPUs of a host on different
    NICs, the rule naming the index. Returns each host's NICs."""
    hosts = ["h0", "h0", "h1", "h1"]
    per_host, indices = {}, []
    ranks = nic_ties_run("nic_ties", 4, hosts, root, bus_ids)
    for rank, (host, ordinal, details) in enumerate(ranks):
        bus = bus_ids[rank % 2]
        check_rank_identity(rank, host, ordinal, details, bus, numa)
        hca, index = check_nic(rank, details, root, bus)
        per_host.setdefault(host, set()).add(hca)
        indices.append(index)
    if any(len(nics) != 2 for nics in per_host.values()):
        fail(f"the NICs of each host's 2 GPUs: {per_host}, expected 2 different ones per host")
    for rank, (_, _, details) in enumerate(ranks):
        check_nic_rule(rank, details, indices[rank])
    return per_host


def check_hca_filter(rng, root, bus_ids):
    """NCCL_IB_HCA=^=NAME (NCCL's environment variables: "^" excludes, "=" matches names exactly) leaves
    one HCA of the two: no tie, both GPUs of the host on it."""
    excluded = rng.choice(["mlx5_0", "mlx5_1"])
    ranks = nic_ties_run("nic_ties_hca", 2, ["h0", "h0"], root, bus_ids, {"NCCL_IB_HCA": f"^={excluded}"})
    for rank, (_, _, details) in enumerate(ranks):
        check_nic(rank, details, root, bus_ids[rank], ties=1, excluded=excluded)


def check_topo_file(root, bus_ids):
    """NCCL_TOPO_FILE replaces the PCI tree NCCL would read: every choice unknown, the note says why."""
    topo = e2e_common.work("nic_ties_topo.xml")
    with open(topo, "w") as f:
        f.write('<system version="1"></system>\n')  # NCCL's topology dump format (NCCL_TOPO_DUMP_FILE)
    ranks = nic_ties_run("nic_ties_topo", 2, ["h0", "h0"], root, bus_ids, {"NCCL_TOPO_FILE": topo})
    for rank, (_, _, details) in enumerate(ranks):
        if details.get("nic") is not None or not details.get("nic_note", "").startswith(f"unknown: NCCL_TOPO_FILE={topo}"):
            fail(f"rank {rank} under NCCL_TOPO_FILE: nic {details.get('nic')}, note {details.get('nic_note')!r}; expected "
                 "unknown (the file's topology replaces the PCI tree)")


def case_nic_ties():
    seed = int(os.environ.get("GPUSCALE_TEST_SEED", random.SystemRandom().randrange(1 << 30)))
    print(f"seed: GPUSCALE_TEST_SEED={seed} replays this case")
    rng = random.Random(seed)
    numa = rng.randrange(8)
    root, bus_ids = sysfs_tree(rng, numa)
    print(f"GPUs {bus_ids} (scenario order), tree {root}")
    per_host = check_ties(root, bus_ids, numa)
    check_hca_filter(rng, root, bus_ids)
    check_topo_file(root, bus_ids)
    print(f"ok: each GPU's NIC is the tree's by its bus-id index ({per_host}), the one HCA NCCL_IB_HCA leaves, "
          "unknown under NCCL_TOPO_FILE")


def main():
    cases = {
        "burn_layouts": (case_burn_layouts, e2e_common.CORES),
        "nic_ties": (case_nic_ties, e2e_common.CORES),
    }
    e2e_common.run_case("e2e_cuda_emulated_", {"TIMEOUT": 600, "LABELS": "e2e;cuda-emulated"}, cases, emu.parse)


if __name__ == "__main__":
    sys.exit(main())
