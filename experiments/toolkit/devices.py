"""Device memory: the one table of the GPUs the course weighs memory against, each with its memory in bytes and
where that figure comes from, and the one unit rule every "does it fit" follows.

The rule: a device holds the bytes its CUDA driver reports (nvidia-smi's memory.total, printed in MiB = 2^20
bytes; PyTorch's ``torch.cuda.get_device_properties(i).total_memory`` gives the same byte count), and a
fits/does-not-fit compares a byte count with those bytes, never with the marketed figure. The marketed "80GB" of
an H100 names the product: the card reports 81,559 MiB = 85,520,809,984 bytes, 85.5 x 10^9, so model states of
81 x 10^9 bytes fit on it. Pages write bytes as GB = 10^9 bytes (as ZeRO's paper does), the device's included.

The figures, per device: the marketed capacity from NVIDIA's datasheet; memory.total as nvidia-smi prints it on
that card (recent drivers, ECC on where the card has it), read from published nvidia-smi outputs; for the H100
and the H200 also the byte count PyTorch reports (85,520,809,984 and 150,754,820,096, exactly those MiB).
The table's key is the marketed GB, the value the pages' device choices send.

Speed, for the inference roofline (toolkit/serving.py): peak memory bandwidth in bytes/s and dense (no 2:4
sparsity) tensor-core FLOP/s in BF16 and in FP8, from the vendor's datasheet. NVIDIA's Hopper datasheets print
tensor FLOP/s "with sparsity"; the dense figure is half of it (the datasheet's own footnote). None where the card has
no such tensor-core path (V100: no BF16, no FP8; A100: no FP8). Bandwidth is TB/s = 10^12 bytes/s.

Links, for the parallel-training time model (toolkit/parallel.py): a ``Fabric`` is a node of GPUs joined by NVLink
and the network between nodes, each as the bytes per second one GPU sends in one direction (what a ring
collective's per-rank bytes are divided by). H100 SXM: NVIDIA's datasheet prints NVLink 900 GB/s, the sum of both
directions over its 18 links, so 450 GB/s each way; between nodes one 400 Gb/s NIC per GPU (ConnectX-7, the DGX
H100's eight compute ports; the Llama 3 report, arXiv 2407.21783 section 3.3.1: "400 Gbps interconnects between
GPUs"), 50 GB/s. H800: the DeepSeek-V3 report (arXiv 2412.19437 section 3.2.2) gives the figures it plans with,
NVLink 160 GB/s and InfiniBand 50 GB/s per GPU; the H800's memory and tensor cores are the H100 SXM's (same
GH100 chip and 80 GB HBM3), so memory and FLOP/s come from the device table's H100.
"""
from __future__ import annotations

from dataclasses import dataclass

MIB = 2 ** 20


@dataclass(frozen=True)
class Device:
    key: str            # the marketed capacity in GB: the value a page's device choice sends
    name: str           # the product, as the pages name it
    mib: int            # memory.total the driver reports (nvidia-smi), MiB
    source: str         # where the marketed figure and the reported one come from (shown with the numbers)
    bandwidth: int      # peak memory bandwidth, bytes/s (datasheet)
    bf16_flops: int | None   # dense BF16 tensor-core FLOP/s (datasheet); None: the card has none
    fp8_flops: int | None    # dense FP8 tensor-core FLOP/s (datasheet); None: the card has none
    speed_source: str   # where bandwidth and FLOP/s come from (URL and what it prints)

    @property
    def bytes(self) -> int:
        """The bytes the device holds: what its driver reports."""
        return self.mib * MIB

    @property
    def marketed_gb(self) -> int:
        return int(self.key)


_SMI = "nvidia-smi 报告的 memory.total"
_T = 10**12
_HOPPER_NOTE = "（数据手册印的是含 2:4 稀疏的峰值，稠密为其一半）"
DEVICES: dict[str, Device] = {d.key: d for d in (
    Device("16", "V100 SXM2 16GB", 16384, f"NVIDIA V100 数据手册：16GB HBM2；{_SMI} 为 16,384 MiB",
           900 * 10**9, None, None,
           "NVIDIA V100 数据手册 https://images.nvidia.com/content/technologies/volta/pdf/"
           "volta-v100-datasheet-update-us-1165301-r5.pdf ：带宽 900 GB/s；张量核只有 FP16（125 TFLOPS），"
           "没有 BF16、FP8"),
    Device("24", "GeForce RTX 4090", 24564, f"NVIDIA GeForce RTX 4090 规格：24GB GDDR6X；{_SMI} 为 24,564 MiB",
           1008 * 10**9, 165_200 * 10**9, 330_300 * 10**9,
           "NVIDIA Ada Lovelace 架构白皮书 https://images.nvidia.com/aem-dam/Solutions/geforce/ada/"
           "nvidia-ada-gpu-architecture.pdf 附录表：RTX 4090 带宽 1,008 GB/s；BF16 张量（FP32 累加）"
           "165.2 TFLOPS、FP8 张量（FP32 累加）330.3 TFLOPS，均为稠密"),
    Device("40", "A100 SXM4 40GB", 40960, f"NVIDIA A100 数据手册：40GB HBM2；{_SMI} 为 40,960 MiB",
           1555 * 10**9, 312 * _T, None,
           "NVIDIA A100 数据手册 https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
           "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf ：A100 40GB SXM 带宽 1,555 GB/s；BF16 张量 "
           "312 TFLOPS（稀疏 624）；没有 FP8"),
    Device("80", "H100 SXM 80GB", 81559,
           f"NVIDIA H100 数据手册：H100 SXM 80GB HBM3；{_SMI} 为 81,559 MiB"
           "（PyTorch 的 total_memory 为 85,520,809,984 字节）",
           3350 * 10**9, 989 * _T, 1979 * _T,
           "NVIDIA H100 数据手册 https://www.nvidia.com/en-us/data-center/h100/ ：H100 SXM 带宽 3.35 TB/s；"
           f"BF16 张量 1,979 TFLOPS、FP8 张量 3,958 TFLOPS{_HOPPER_NOTE}，即稠密 989 与 1,979 TFLOPS"),
    Device("141", "H200 141GB", 143771,
           f"NVIDIA H200 数据手册：141GB HBM3e；{_SMI} 为 143,771 MiB"
           "（PyTorch 的 total_memory 为 150,754,820,096 字节）",
           4800 * 10**9, 989 * _T, 1979 * _T,
           "NVIDIA H200 数据手册 https://www.nvidia.com/en-us/data-center/h200/ ：H200 SXM 带宽 4.8 TB/s；"
           f"BF16 张量 1,979 TFLOPS、FP8 张量 3,958 TFLOPS{_HOPPER_NOTE}，即稠密 989 与 1,979 TFLOPS"),
)}
H100 = DEVICES["80"]


def device(key) -> Device:
    """The device a page's choice names (its marketed GB as text); a ValueError in Chinese otherwise."""
    if str(key) not in DEVICES:
        raise ValueError(f"显卡：应为 {'、'.join(f'{k} GB' for k in DEVICES)} 之一，实际是 {key!r}")
    return DEVICES[str(key)]


@dataclass(frozen=True)
class Fabric:
    key: str            # the value a page's choice sends
    name: str           # as the pages name it
    gpus_per_node: int  # GPUs joined by NVLink
    nvlink: int         # bytes/s one GPU sends inside its node, one direction
    network: int        # bytes/s one GPU sends to other nodes, one direction
    source: str         # where both figures come from (shown with the numbers)


FABRICS: dict[str, Fabric] = {f.key: f for f in (
    Fabric("h100", "H100 SXM 节点（NVLink 4，每卡一块 400 Gb/s 网卡）", 8, 450 * 10**9, 50 * 10**9,
           "NVIDIA H100 数据手册 https://www.nvidia.com/en-us/data-center/h100/ ：NVLink 900 GB/s（18 条链路、"
           "两个方向之和，单向 450 GB/s）；节点之间每卡 400 Gb/s（Llama 3 报告 3.3.1 节：GPU 之间 400 Gbps），"
           "即 50 GB/s"),
    Fabric("h800", "H800 节点（DeepSeek-V3 的集群）", 8, 160 * 10**9, 50 * 10**9,
           "DeepSeek-V3 技术报告 https://arxiv.org/abs/2412.19437 3.2.2 节：节点内 NVLink 160 GB/s，"
           "节点间 InfiniBand 50 GB/s，约为前者的 1/3.2"),
)}


def fabric(key) -> Fabric:
    """The fabric a page's choice names; a ValueError in Chinese otherwise."""
    if str(key) not in FABRICS:
        raise ValueError(f"互联：应为 {'、'.join(FABRICS)} 之一，实际是 {key!r}")
    return FABRICS[str(key)]


def fits(nbytes: int, dev: Device) -> bool:
    """The unit rule: bytes against the bytes the device reports."""
    return nbytes <= dev.bytes
