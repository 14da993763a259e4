# label: hazard raises no-twin
# why: q_actions_ is computed through the Q networks, then qf optimizers step (in-place weight updates) before actor_loss.backward() needs those weights
# source: https://github.com/TianhongDai/reinforcement-learning-algorithms/issues/8
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)


class flatten_mlp(nn.Module):
    def __init__(self, input_dims, hidden_size, action_dims=None):
        super().__init__()
        self.fc1 = nn.Linear(input_dims if action_dims is None else input_dims + action_dims, hidden_size)
        self.q_value = nn.Linear(hidden_size, 1)

    def forward(self, obs, action=None):
        inputs = torch.cat([obs, action], dim=1) if action is not None else obs
        return self.q_value(torch.relu(self.fc1(inputs)))


class tanh_gaussian_actor(nn.Module):
    def __init__(self, input_dims, action_dims, hidden_size):
        super().__init__()
        self.fc1 = nn.Linear(input_dims, hidden_size)
        self.mean = nn.Linear(hidden_size, action_dims)
        self.log_std = nn.Linear(hidden_size, action_dims)

    def forward(self, obs):
        x = torch.relu(self.fc1(obs))
        return self.mean(x), self.log_std(x).clamp(-20, 2).exp()


class sac_agent:
    def __init__(self):
        self.qf1 = flatten_mlp(3, 16, 1)
        self.qf2 = flatten_mlp(3, 16, 1)
        self.target_qf1 = flatten_mlp(3, 16, 1)
        self.target_qf2 = flatten_mlp(3, 16, 1)
        self.actor_net = tanh_gaussian_actor(3, 1, 16)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.qf1_optim = torch.optim.Adam(self.qf1.parameters(), lr=3e-4)
        self.qf2_optim = torch.optim.Adam(self.qf2.parameters(), lr=3e-4)
        self.actor_optim = torch.optim.Adam(self.actor_net.parameters(), lr=3e-4)
        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=3e-4)

    def _update_newtork(self, obses, actions, rewards, obses_, inverse_dones):
        mean, std = self.actor_net(obses)
        dist = Normal(mean, std)
        pre_tanh = dist.rsample()
        actions_ = torch.tanh(pre_tanh)
        log_prob = (dist.log_prob(pre_tanh) - torch.log(1 - actions_.pow(2) + 1e-6)).sum(dim=1, keepdim=True)
        alpha_loss = -(self.log_alpha * (log_prob - 1.0).detach()).mean()
        self.alpha_optim.zero_grad()
        alpha_loss.backward()
        self.alpha_optim.step()
        alpha = self.log_alpha.exp().detach()
        q_actions_ = torch.min(self.qf1(obses, actions_), self.qf2(obses, actions_))
        actor_loss = (alpha * log_prob - q_actions_).mean()

        q1_value = self.qf1(obses, actions)
        q2_value = self.qf2(obses, actions)
        with torch.no_grad():
            mean_, std_ = self.actor_net(obses_)
            a_ = torch.tanh(Normal(mean_, std_).sample())
            target_q = torch.min(self.target_qf1(obses_, a_), self.target_qf2(obses_, a_))
            target_q_value = rewards + inverse_dones * 0.99 * target_q
        qf1_loss = (target_q_value - q1_value).pow(2).mean()
        qf2_loss = (target_q_value - q2_value).pow(2).mean()

        self.qf1_optim.zero_grad()
        qf1_loss.backward()
        self.qf1_optim.step()  # <-- IPL001: qf1 weights modified in place while actor_loss still needs them
        self.qf2_optim.zero_grad()
        qf2_loss.backward()
        self.qf2_optim.step()  # <-- IPL001: qf2 weights modified in place while actor_loss still needs them

        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return qf1_loss.detach(), actor_loss.detach()


agent = sac_agent()
batch = (torch.randn(8, 3), torch.rand(8, 1) * 2 - 1, torch.randn(8, 1), torch.randn(8, 3), torch.ones(8, 1))
qf_loss, actor_loss = agent._update_newtork(*batch)
