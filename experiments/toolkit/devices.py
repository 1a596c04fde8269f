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

    @property
    def bytes(self) -> int:
        """The bytes the device holds: what its driver reports."""
        return self.mib * MIB

    @property
    def marketed_gb(self) -> int:
        return int(self.key)


_SMI = "nvidia-smi 报告的 memory.total"
DEVICES: dict[str, Device] = {d.key: d for d in (
    Device("16", "V100 SXM2 16GB", 16384, f"NVIDIA V100 数据手册：16GB HBM2；{_SMI} 为 16,384 MiB"),
    Device("24", "GeForce RTX 4090", 24564, f"NVIDIA GeForce RTX 4090 规格：24GB GDDR6X；{_SMI} 为 24,564 MiB"),
    Device("40", "A100 SXM4 40GB", 40960, f"NVIDIA A100 数据手册：40GB HBM2；{_SMI} 为 40,960 MiB"),
    Device("80", "H100 SXM 80GB", 81559,
           f"NVIDIA H100 数据手册：H100 SXM 80GB HBM3；{_SMI} 为 81,559 MiB"
           "（PyTorch 的 total_memory 为 85,520,809,984 字节）"),
    Device("141", "H200 141GB", 143771,
           f"NVIDIA H200 数据手册：141GB HBM3e；{_SMI} 为 143,771 MiB"
           "（PyTorch 的 total_memory 为 150,754,820,096 字节）"),
)}
H100 = DEVICES["80"]


def device(key) -> Device:
    """The device a page's choice names (its marketed GB as text); a ValueError in Chinese otherwise."""
    if str(key) not in DEVICES:
        raise ValueError(f"显卡：应为 {'、'.join(f'{k} GB' for k in DEVICES)} 之一，实际是 {key!r}")
    return DEVICES[str(key)]


def fits(nbytes: int, dev: Device) -> bool:
    """The unit rule: bytes against the bytes the device reports."""
    return nbytes <= dev.bytes
