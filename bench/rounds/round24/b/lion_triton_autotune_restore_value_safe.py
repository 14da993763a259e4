# label: safe no-twin
# why: with restore_value the autotuner snapshots `p` and `exp_avg` before benchmarking and copies the snapshot back afterwards, so the kernel's in-place stores during benchmarking are undone and the parameters take exactly one Lion step.
# source: https://github.com/lucidrains/lion-pytorch/commit/974b754ffd65f7026ad8ea40c95efdb2b6d69230
import torch
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class Config:
    def __init__(self, kwargs):
        self.kwargs = kwargs


class Autotuner:
    """Python stand-in for triton.autotune: benchmark every config, cache the best per key."""

    def __init__(self, fn, configs, key, restore_value=None, n_reps=3):
        self.fn = fn
        self.configs = configs
        self.key = key
        self.restore_value = restore_value or []
        self.n_reps = n_reps
        self.cache = {}

    def _bench(self, config, **kwargs):
        saved = {name: kwargs[name].clone() for name in self.restore_value}
        for _ in range(self.n_reps):
            self.fn(**kwargs, **config.kwargs)
        for name in self.restore_value:
            kwargs[name].copy_(saved[name])
        return float(config.kwargs["BLOCK_SIZE"])

    def __call__(self, **kwargs):
        key = tuple(kwargs[k] for k in self.key)
        if key not in self.cache:
            timings = {i: self._bench(c, **kwargs) for i, c in enumerate(self.configs)}
            self.cache[key] = self.configs[min(timings, key=timings.get)]
        return self.fn(**kwargs, **self.cache[key].kwargs)


def autotune(configs, key, restore_value=None):
    def decorator(fn):
        return Autotuner(fn, configs, key, restore_value)
    return decorator


@autotune(configs=[Config({'BLOCK_SIZE': 2}), Config({'BLOCK_SIZE': 4})], key=['n_elements'],
          restore_value=['p_ptr', 'exp_avg_ptr'])
def update_fn_kernel(p_ptr, grad_ptr, exp_avg_ptr, lr, wd, beta1, beta2, n_elements, BLOCK_SIZE):
    for block_start in range(0, n_elements, BLOCK_SIZE):
        offsets = slice(block_start, block_start + BLOCK_SIZE)
        p = p_ptr[offsets]
        grad = grad_ptr[offsets]
        exp_avg = exp_avg_ptr[offsets]

        p = p * (1 - lr * wd)
        diff = exp_avg - grad
        update = diff * beta1 + grad
        can_update = update != 0
        update_sign = torch.where(update > 0, -lr, lr)
        p = p + update_sign * can_update
        exp_avg = diff * beta2 + grad

        p_ptr[offsets] = p
        exp_avg_ptr[offsets] = exp_avg


def update_fn(p, grad, exp_avg, lr, wd, beta1, beta2):
    n_elements = p.numel()
    update_fn_kernel(p_ptr=p, grad_ptr=grad, exp_avg_ptr=exp_avg, lr=lr, wd=wd,
                     beta1=beta1, beta2=beta2, n_elements=n_elements)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay)
        super().__init__(params, defaults)
        self.update_fn = update_fn

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in filter(lambda p: p.grad is not None, group['params']):
                grad, lr, wd, beta1, beta2, state = p.grad, group['lr'], group['weight_decay'], *group['betas'], self.state[p]
                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)
                exp_avg = state['exp_avg']
                self.update_fn(p.view(-1), grad.view(-1), exp_avg.view(-1), lr, wd, beta1, beta2)


def main():
    model = torch.nn.Linear(3, 2)
    opt = Lion(model.parameters(), lr=1e-2, weight_decay=0.1)
    before = model.weight.detach().clone()
    loss = model(torch.randn(4, 3)).pow(2).sum()
    loss.backward()
    opt.step()
    # one Lion step moves every weight by at most lr (plus weight decay)
    return (model.weight.detach() - before).abs().max()


max_weight_change = main()
