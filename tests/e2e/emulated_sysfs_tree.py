"""A node's PCI tree as Linux's sysfs shows it, built in a test's workdir, and the NIC NCCL gives a GPU
on it, read back from the tree (never from gpuscale's output): e2e_cuda_emulated_findings.py's nic_ties
case points the CUDA device at it (GPUSCALE_TEST_SYSFS_ROOT, kernels/sysfs_root.h).
"""
import os
import shutil

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


def sysfs_tree(root, rng, numa):
    """A node whose PCIe switch holds 2 GPUs and 2 HCAs, one to a downstream port, so every GPU is 4
    hops from every HCA and NCCL's tie rule decides; the slots, the HCAs' names and which HCA has a
    second port that is down drawn from `rng`; an NVSwitch on a lower bus than the GPUs. The local
    cores are this process's own, so the rank's binding keeps them. Returns (root, [GPU 0's and GPU
    1's bus ids, as the scenario lists them])."""
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
