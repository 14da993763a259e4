# label: hazard silent no-twin
# why: the exploit step transplants the leader's optimizer state with load_state_dict(state_dict()) in-process, which leaves both Adam optimizers sharing the same exp_avg/exp_avg_sq tensors, so every step of one worker silently rewrites the other's moments
# source: https://github.com/pytorch/pytorch/issues/196083
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Worker:
    def __init__(self, lr):
        self.model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.lr = lr

    def train_step(self, x, y):
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()  # <-- IPL002: updates exp_avg/exp_avg_sq in place, and after the exploit step those tensors are shared with the other worker
        return loss.detach()

    def exploit(self, leader):
        # copy weights and optimizer state from the better worker, then perturb the lr
        self.model.load_state_dict(leader.model.state_dict())
        self.optimizer.load_state_dict(leader.optimizer.state_dict())
        for group in self.optimizer.param_groups:
            group["lr"] = leader.lr * 1.2


x = torch.randn(32, 4)
y = x.sum(-1, keepdim=True).sin()
workers = [Worker(1e-2), Worker(3e-3)]
for step in range(3):
    losses = [w.train_step(x, y) for w in workers]

leader, follower = sorted(workers, key=lambda w: float(w.train_step(x, y)))
follower.exploit(leader)
history = []
for step in range(3):
    history.append(torch.stack([leader.train_step(x, y), follower.train_step(x, y)]))
history = torch.stack(history)
leader_exp_avg = next(iter(leader.optimizer.state.values()))["exp_avg"].clone()
