# label: hazard raises no-twin
# why: gradients are backpropagated over several update windows (retain_graph=True, the latent belief is only detached every multiplier_backprop_length updates), but optimizer.step() updates the weights in place after every window, so the next backward reaches weights saved at an older version.
# source: https://github.com/maximilianigl/DVRL/issues/5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DVRLPolicy(nn.Module):
    def __init__(self, obs_dim=4, h_dim=8, action_dim=3):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, h_dim)
        self.transition = nn.GRUCell(h_dim, h_dim)
        self.actor = nn.Linear(h_dim, action_dim)
        self.critic = nn.Linear(h_dim, 1)

    def forward(self, current_memory, obs):
        latent = self.transition(F.relu(self.encoder(obs)), current_memory)
        return {"latent": latent, "logits": self.actor(latent), "value": self.critic(latent)}


actor_critic = DVRLPolicy()
optimizer = torch.optim.RMSprop(actor_critic.parameters(), lr=1e-3)
num_steps = 3
multiplier_backprop_length = 2
num_updates = 4
current_memory = torch.zeros(2, 8)
losses = []
for j in range(num_updates):
    values, log_probs, rewards = [], [], []
    for step in range(num_steps):
        obs = torch.randn(2, 4)
        policy_return = actor_critic(current_memory, obs)
        current_memory = policy_return["latent"]
        dist = torch.distributions.Categorical(logits=policy_return["logits"])
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        values.append(policy_return["value"].squeeze(-1))
        rewards.append(torch.randn(2))
    returns = torch.stack(rewards).flip(0).cumsum(0).flip(0)
    advantages = returns - torch.stack(values)
    total_loss = advantages.pow(2).mean() - (advantages.detach() * torch.stack(log_probs)).mean()
    retain_graph = j % multiplier_backprop_length != 0
    optimizer.zero_grad()
    total_loss.backward(retain_graph=retain_graph)
    optimizer.step()  # <-- IPL001: updates weights still saved by the retained graph of the previous window
    if not retain_graph:
        current_memory = current_memory.detach()
    losses.append(total_loss.detach())
