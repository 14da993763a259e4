# label: hazard raises no-twin
# why: BEAR.train calls actor_optimizer.step() (in-place update of the actor's Linear weights) after actor_loss.backward(retain_graph=True) and then backpropagates lagrange_loss through the same actor graph, whose saved weights are now at a newer version.
# source: https://github.com/aviralkumar2907/BEAR/issues/7
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")


class RegularActor(nn.Module):
    """A probabilistic actor which does regular stochastic mapping of actions from states"""
    def __init__(self, state_dim, action_dim, max_action):
        super(RegularActor, self).__init__()
        self.l1 = nn.Linear(state_dim, 32)
        self.l2 = nn.Linear(32, 32)
        self.mean = nn.Linear(32, action_dim)
        self.log_std = nn.Linear(32, action_dim)
        self.max_action = max_action

    def sample_multiple(self, state, num_sample=10):
        a = F.relu(self.l1(state))
        a = F.relu(self.l2(a))
        mean_a = self.mean(a)
        log_std_a = self.log_std(a)
        std_a = torch.exp(log_std_a)
        noise = torch.randn(std_a.size(0), num_sample, std_a.size(1)).to(device).clamp(-0.5, 0.5)
        z = mean_a.unsqueeze(1) + std_a.unsqueeze(1) * noise
        return self.max_action * torch.tanh(z), z


class BEAR(object):
    def __init__(self, state_dim, action_dim, max_action, lagrange_thresh=10.0, mmd_sigma=10.0):
        self.actor = RegularActor(state_dim, action_dim, max_action).to(device)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters())
        self.log_lagrange2 = torch.randn((), requires_grad=True, device=device)
        self.lagrange2_opt = torch.optim.Adam([self.log_lagrange2, ], lr=1e-3)
        self.lagrange_thresh = lagrange_thresh
        self.mmd_sigma = mmd_sigma

    def mmd_loss_laplacian(self, samples1, samples2, sigma=0.2):
        diff_x_x = samples1.unsqueeze(2) - samples1.unsqueeze(1)
        diff_x_x = torch.mean((-(diff_x_x.abs()).sum(-1) / (2.0 * sigma)).exp(), dim=(1, 2))
        diff_x_y = samples1.unsqueeze(2) - samples2.unsqueeze(1)
        diff_x_y = torch.mean((-(diff_x_y.abs()).sum(-1) / (2.0 * sigma)).exp(), dim=(1, 2))
        diff_y_y = samples2.unsqueeze(2) - samples2.unsqueeze(1)
        diff_y_y = torch.mean((-(diff_y_y.abs()).sum(-1) / (2.0 * sigma)).exp(), dim=(1, 2))
        return (diff_x_x + diff_y_y - 2.0 * diff_x_y + 1e-6).sqrt()

    def train(self, state, raw_sampled_actions, num_samples=4):
        actor_actions, raw_actor_actions = self.actor.sample_multiple(state, num_samples)
        mmd_loss = self.mmd_loss_laplacian(raw_sampled_actions, raw_actor_actions, sigma=self.mmd_sigma)
        actor_loss = (self.log_lagrange2.exp() * mmd_loss).mean()

        self.actor_optimizer.zero_grad()
        actor_loss.backward(retain_graph=True)
        self.actor_optimizer.step()  # <-- IPL001

        thresh = 0.05
        lagrange_loss = (self.log_lagrange2.exp() * (mmd_loss - thresh)).mean()
        self.lagrange2_opt.zero_grad()
        (-lagrange_loss).backward()
        self.lagrange2_opt.step()
        self.log_lagrange2.data.clamp_(min=-5.0, max=self.lagrange_thresh)
        return actor_loss.item(), lagrange_loss.item()


def main():
    agent = BEAR(state_dim=6, action_dim=2, max_action=1.0)
    state = torch.randn(8, 6)
    raw_sampled_actions = torch.randn(8, 4, 2)
    print(agent.train(state, raw_sampled_actions))


main()
