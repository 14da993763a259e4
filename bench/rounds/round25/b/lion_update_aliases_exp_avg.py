# label: hazard silent
# why: Lion.step binds update = exp_avg = state['exp_avg'], so update.mul_(beta1).add_(grad) writes the interpolation into the momentum buffer itself and the following exp_avg.mul_(beta2).add_(grad) decays an already-updated state, silently changing both the sign update and the stored momentum.
# source: https://github.com/kozistr/pytorch_optimizer/commit/178d8f09c0fd04efeb4aec31d8e8149a876daf68 ("fix: update")
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class Lion(Optimizer):
    """Symbolic Discovery of Optimization Algorithms."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, weight_decouple=True):
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay, weight_decouple=weight_decouple)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        for group in self.param_groups:
            beta1, beta2 = group['betas']
            weight_decay = group['weight_decay']
            for p in group['params']:
                if p.grad is None:
                    continue

                grad = p.grad
                state = self.state[p]

                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)

                update = exp_avg = state['exp_avg']

                if weight_decay > 0.0:
                    if group['weight_decouple']:
                        p.mul_(1.0 - group['lr'] * weight_decay)
                    else:
                        grad.add_(p, alpha=weight_decay)

                update.mul_(beta1).add_(grad, alpha=1.0 - beta1)  # <-- IPL002
                exp_avg.mul_(beta2).add_(grad, alpha=1.0 - beta2)

                p.add_(update.sign(), alpha=-group['lr'])

        return loss


class TinyLM(nn.Module):
    def __init__(self, vocab=16, dim=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, idx):
        return self.lm_head(torch.tanh(self.wte(idx)))


def main():
    model = TinyLM()
    optimizer = Lion(model.parameters(), lr=1e-2, weight_decay=0.01)
    for _ in range(4):
        idx = torch.randint(0, 16, (4, 6))
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 16), idx[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    p = model.lm_head.weight
    return optimizer.state[p]['exp_avg'].clone(), p.detach().clone()


lm_head_exp_avg, lm_head_weight = main()
