"""A fake upstream: hands out addresses without memory (CuPy's MockMemory idea)."""

from allocator import Upstream


class FakeUpstream(Upstream):
    """Addresses from a counter; records every call.  ``capacity`` bytes at most."""

    def __init__(self, capacity=1 << 40, kind="cpu"):
        super().__init__(kind, 0, kind != "gpu")
        self.capacity = capacity
        self.live = {}
        self.next = 1 << 30
        self.allocs = []
        self.frees = []
        self.fail_next = 0

    def alloc(self, nbytes):
        self.allocs.append(nbytes)
        if self.fail_next:
            self.fail_next -= 1
            return 0
        if sum(self.live.values()) + nbytes > self.capacity:
            return 0
        p = self.next
        self.next += nbytes + (1 << 20)  # gaps: neighbouring segments never touch
        self.live[p] = nbytes
        return p

    def free(self, ptr, nbytes):
        assert self.live.pop(ptr) == nbytes, "upstream freed with the wrong size"
        self.frees.append(nbytes)
        return 0

    @property
    def held(self):
        return sum(self.live.values())
