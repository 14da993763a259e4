# label: safe
# why: the fix from the issue computes policy_loss only after Q1 and Q2 have been stepped, so every optimizer step happens before the forward whose backward comes next.
# source: https://github.com/toshikwa/soft-actor-critic.pytorch/issues/1 (code/agent.py learn / code/utils.py update_params)
import torch
import torch.nn as nn
from torch.distributions import Normal
from torch.optim import Adam

torch.manual_seed(0)


def create_linear_network(input_dim, output_dim, hidden_units=[16, 16]):
    model = []
    units = input_dim
    for next_units in hidden_units:
        model.append(nn.Linear(units, next_units))
        model.append(nn.ReLU())
        units = next_units
    model.append(nn.Linear(units, output_dim))
    return nn.Sequential(*model)


def update_params(optim, network, loss, grad_clip=None, retain_graph=False):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    if grad_clip is not None:
        for p in network.modules():
            torch.nn.utils.clip_grad_norm_(p.parameters(), grad_clip)
    optim.step()


def soft_update(target, source, tau):
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.copy_(t.data * (1.0 - tau) + s.data * tau)


def hard_update(target, source):
    target.load_state_dict(source.state_dict())


def grad_false(network):
    for param in network.parameters():
        param.requires_grad = False


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super().__init__()
        self.Q = create_linear_network(num_inputs + num_actions, 1)

    def forward(self, x):
        return self.Q(x)


class TwinnedQNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super().__init__()
        self.Q1 = QNetwork(num_inputs, num_actions)
        self.Q2 = QNetwork(num_inputs, num_actions)

    def forward(self, states, actions):
        x = torch.cat([states, actions], dim=1)
        return self.Q1(x), self.Q2(x)


class GaussianPolicy(nn.Module):
    LOG_STD_MAX = 2
    LOG_STD_MIN = -20
    eps = 1e-6

    def __init__(self, num_inputs, num_actions):
        super().__init__()
        self.policy = create_linear_network(num_inputs, num_actions * 2)

    def forward(self, states):
        mean, log_std = torch.chunk(self.policy(states), 2, dim=-1)
        log_std = torch.clamp(log_std, min=self.LOG_STD_MIN, max=self.LOG_STD_MAX)
        return mean, log_std

    def sample(self, states):
        means, log_stds = self.forward(states)
        stds = log_stds.exp()
        normals = Normal(means, stds)
        xs = normals.rsample()
        actions = torch.tanh(xs)
        log_probs = normals.log_prob(xs) - torch.log(1 - actions.pow(2) + self.eps)
        entropies = -log_probs.sum(dim=1, keepdim=True)
        return actions, entropies, torch.tanh(means)


class SacAgent:
    def __init__(self, obs_dim=4, act_dim=2, lr=0.0003, gamma=0.99, tau=0.005):
        self.policy = GaussianPolicy(obs_dim, act_dim)
        self.critic = TwinnedQNetwork(obs_dim, act_dim)
        self.critic_target = TwinnedQNetwork(obs_dim, act_dim).eval()
        hard_update(self.critic_target, self.critic)
        grad_false(self.critic_target)
        self.policy_optim = Adam(self.policy.parameters(), lr=lr)
        self.q1_optim = Adam(self.critic.Q1.parameters(), lr=lr)
        self.q2_optim = Adam(self.critic.Q2.parameters(), lr=lr)
        self.target_entropy = -float(act_dim)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha = self.log_alpha.exp()
        self.alpha_optim = Adam([self.log_alpha], lr=lr)
        self.gamma_n = gamma
        self.tau = tau
        self.grad_clip = None

    def calc_target_q(self, states, actions, rewards, next_states, dones):
        with torch.no_grad():
            next_actions, next_entropies, _ = self.policy.sample(next_states)
            next_q1, next_q2 = self.critic_target(next_states, next_actions)
            next_q = torch.min(next_q1, next_q2) + self.alpha * next_entropies
        return rewards + (1.0 - dones) * self.gamma_n * next_q

    def calc_critic_loss(self, batch, weights):
        curr_q1, curr_q2 = self.critic(batch[0], batch[1])
        target_q = self.calc_target_q(*batch)
        q1_loss = torch.mean((curr_q1 - target_q).pow(2) * weights)
        q2_loss = torch.mean((curr_q2 - target_q).pow(2) * weights)
        return q1_loss, q2_loss

    def calc_policy_loss(self, batch, weights):
        states, actions, rewards, next_states, dones = batch
        sampled_action, entropy, _ = self.policy.sample(states)
        q1, q2 = self.critic(states, sampled_action)
        q = torch.min(q1, q2)
        policy_loss = torch.mean((- q - self.alpha * entropy) * weights)
        return policy_loss, entropy

    def calc_entropy_loss(self, entropy, weights):
        return -torch.mean(self.log_alpha * (self.target_entropy - entropy).detach() * weights)

    def learn(self, batch):
        soft_update(self.critic_target, self.critic, self.tau)
        weights = 1.

        q1_loss, q2_loss = self.calc_critic_loss(batch, weights)

        update_params(self.q1_optim, self.critic.Q1, q1_loss, self.grad_clip)
        update_params(self.q2_optim, self.critic.Q2, q2_loss, self.grad_clip)

        # calculate `policy_loss` after updating Q1 and Q2
        policy_loss, entropies = self.calc_policy_loss(batch, weights)
        update_params(self.policy_optim, self.policy, policy_loss, self.grad_clip)

        entropy_loss = self.calc_entropy_loss(entropies, weights)
        update_params(self.alpha_optim, None, entropy_loss)
        self.alpha = self.log_alpha.exp()
        return q1_loss.detach(), policy_loss.detach()


agent = SacAgent()
batch = (torch.randn(6, 4), torch.rand(6, 2) * 2 - 1, torch.randn(6, 1), torch.randn(6, 4), torch.zeros(6, 1))
q1_loss, policy_loss = agent.learn(batch)
log_alpha = agent.log_alpha.detach().clone()
