# Put in front of a VM test script before mypy checks it, as the NixOS test
# driver does with its own prepend file (nixpkgs nixos/lib/test-script-prepend.py),
# followed by one `<node>: QemuMachine` line per VM. The globals the driver
# injects into a test script, with the types it gives them.
from contextlib import AbstractContextManager
from typing import Callable, Protocol

from test_driver.machine import QemuMachine


class RetryProtocol(Protocol):
    def __call__(self, fn: Callable, timeout: int = 900) -> None: ...


start_all: Callable[[], None]
join_all: Callable[[], None]
subtest: Callable[[str], AbstractContextManager[None]]
retry: RetryProtocol
machines: list[QemuMachine]
serial_stdout_off: Callable[[], None]
serial_stdout_on: Callable[[], None]
