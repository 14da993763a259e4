# label: hazard raises
# why: the DDP wrapper re-broadcasts the module buffers in place at every forward; calling the module twice before backward bumps `buf`, which the first call's multiplication saved
# source: https://github.com/pytorch/pytorch/issues/22095
import torch as th

th.manual_seed(0)


class Mod(th.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = th.nn.Linear(16, 8)
        self.register_buffer("buf", th.ones(1, 8) * 0.5)

    def forward(self, z):
        return (self.lin(z) * self.buf).sum()


class DistributedDataParallel(th.nn.Module):
    def __init__(self, module, broadcast_buffers=True):
        super().__init__()
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self._authoritative = {name: b.detach().clone() for name, b in module.named_buffers()}

    def _sync_module_buffers(self):
        with th.no_grad():
            for name, buf in self.module.named_buffers():
                buf.copy_(self._authoritative[name])  # <-- IPL001: broadcast writes into a buffer saved by the previous forward

    def forward(self, *inputs):
        if self.broadcast_buffers:
            self._sync_module_buffers()
        return self.module(*inputs)


model = DistributedDataParallel(Mod())
opt = th.optim.SGD(model.parameters(), lr=0.1)
z1 = th.randn(4, 16)
z2 = th.randn(4, 16)
out1 = model(z1)
out2 = model(z2)
loss = out1 - out2
opt.zero_grad()
loss.backward()
opt.step()
