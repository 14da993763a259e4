# label: hazard raises no-twin
# why: the Q-function optimizers step before policy_loss (built from qf1/qf2 on the actor's samples) is backpropagated, and the policy optimizer steps before the Lagrange-multiplier backward reuses the retained policy graph
# source: https://github.com/Farama-Foundation/D4RL/issues/57
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
obs_dim, act_dim, latent_dim = 3, 2, 2


def mlp(i, o, h=16):
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))


class QF(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp(obs_dim + act_dim, 1)

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], -1))


class TanhGaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp(obs_dim, 2 * act_dim)

    def forward(self, obs):
        mean, log_std = self.net(obs).chunk(2, -1)
        raw_action = mean + log_std.clamp(-5, 2).exp() * torch.randn_like(mean)
        return torch.tanh(raw_action), raw_action


class VAEPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = mlp(obs_dim + act_dim, 2 * latent_dim)
        self.dec = mlp(obs_dim + latent_dim, act_dim)

    def forward(self, obs, act):
        mean, log_std = self.enc(torch.cat([obs, act], -1)).chunk(2, -1)
        std = log_std.clamp(-4, 15).exp()
        z = mean + std * torch.randn_like(std)
        return torch.tanh(self.dec(torch.cat([obs, z], -1))), mean, std

    def decode_multiple(self, obs, num_decode=4):
        z = torch.randn(obs.shape[0], num_decode, latent_dim).clamp(-0.5, 0.5)
        obs_rep = obs.unsqueeze(1).repeat(1, num_decode, 1)
        raw = self.dec(torch.cat([obs_rep, z], -1))
        return torch.tanh(raw), raw


def mmd_loss_laplacian(samples1, samples2, sigma=0.2):
    diff_x_x = (samples1.unsqueeze(2) - samples1.unsqueeze(1)).abs().sum(-1)
    diff_x_y = (samples1.unsqueeze(2) - samples2.unsqueeze(1)).abs().sum(-1)
    diff_y_y = (samples2.unsqueeze(2) - samples2.unsqueeze(1)).abs().sum(-1)
    overall = (torch.exp(-diff_x_x / (2.0 * sigma)).mean((1, 2)) + torch.exp(-diff_y_y / (2.0 * sigma)).mean((1, 2))
               - 2.0 * torch.exp(-diff_x_y / (2.0 * sigma)).mean((1, 2)))
    return (overall + 1e-6).sqrt()


qf1, qf2, policy, vae = QF(), QF(), TanhGaussianPolicy(), VAEPolicy()
target_qf1, target_qf2 = QF(), QF()
log_alpha = torch.zeros(1, requires_grad=True)
qf1_optimizer = torch.optim.Adam(qf1.parameters(), lr=3e-4)
qf2_optimizer = torch.optim.Adam(qf2.parameters(), lr=3e-4)
policy_optimizer = torch.optim.Adam(policy.parameters(), lr=1e-4)
vae_optimizer = torch.optim.Adam(vae.parameters(), lr=3e-4)
alpha_optimizer = torch.optim.Adam([log_alpha], lr=1e-3)
discount, num_samples_mmd_match, target_mmd_thresh = 0.99, 4, 0.05

obs, actions = torch.randn(8, obs_dim), torch.rand(8, act_dim) * 2 - 1
rewards, terminals, next_obs = torch.randn(8, 1), torch.zeros(8, 1), torch.randn(8, obs_dim)

# Behavior clone a policy
recon, mean, std = vae(obs, actions)
recon_loss = F.mse_loss(recon, actions)
kl_loss = -0.5 * (1 + torch.log(std.pow(2)) - mean.pow(2) - std.pow(2)).mean()
vae_loss = recon_loss + 0.5 * kl_loss
vae_optimizer.zero_grad()
vae_loss.backward()
vae_optimizer.step()

# Critic Training
with torch.no_grad():
    next_actions, _ = policy(next_obs)
    target_q = torch.min(target_qf1(next_obs, next_actions), target_qf2(next_obs, next_actions))
    q_target = rewards + (1.0 - terminals) * discount * target_q
qf1_loss = F.mse_loss(qf1(obs, actions), q_target)
qf2_loss = F.mse_loss(qf2(obs, actions), q_target)

# Actor Training
sampled_actions, raw_sampled_actions = vae.decode_multiple(obs, num_decode=num_samples_mmd_match)
actor_samples, raw_actor_actions = policy(obs.unsqueeze(1).repeat(1, num_samples_mmd_match, 1))
mmd_loss = mmd_loss_laplacian(raw_sampled_actions.detach(), raw_actor_actions)
q_val1 = qf1(obs, actor_samples[:, 0, :])
q_val2 = qf2(obs, actor_samples[:, 0, :])
policy_loss = torch.min(q_val1, q_val2)[:, 0]
policy_loss = (-policy_loss + log_alpha.exp() * (mmd_loss - target_mmd_thresh)).mean()

# Update Networks
qf1_optimizer.zero_grad()
qf1_loss.backward()
qf1_optimizer.step()  # <-- IPL001: qf1 weights are saved by q_val1 in policy_loss's graph
qf2_optimizer.zero_grad()
qf2_loss.backward()
qf2_optimizer.step()  # <-- IPL001: qf2 weights are saved by q_val2 in policy_loss's graph
policy_optimizer.zero_grad()
policy_loss.backward(retain_graph=True)
policy_optimizer.step()  # <-- IPL001: policy weights are needed again by the retained graph below
alpha_optimizer.zero_grad()
(-policy_loss).backward()
alpha_optimizer.step()
