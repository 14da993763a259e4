# label: hazard silent
# why: the hidden pre-activation is rectified with relu_ and then used as the autograd.grad target, so the penalty gets gradients w.r.t. the post-ReLU tensor instead of the pre-activation.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 1)


critic = Critic()
real = torch.randn(5, 4)
fake = torch.randn(5, 4)

pre = critic.fc1(real)
act = F.relu_(pre)  # <-- IPL006
score_real = critic.fc2(act).mean()
(grad_pre,) = torch.autograd.grad(score_real, pre, create_graph=True)
penalty = grad_pre.pow(2).sum(dim=1).mean()

score_fake = critic.fc2(F.relu(critic.fc1(fake))).mean()
loss = score_fake - score_real + 10.0 * penalty
loss.backward()
