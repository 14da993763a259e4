# label: safe
# why: log_probs -= log(1 - action^2 + eps) writes into the fresh Normal.log_prob result, which no op saved, and the later critic/value updates each run their own forward after the actor step
# source: https://github.com/philtabor/Actor-Critic-Methods-Paper-To-Code/issues/7
import torch as T
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions.normal import Normal

T.manual_seed(0)


class CriticNetwork(nn.Module):
    def __init__(self, beta, input_dims, n_actions, fc1_dims=32, fc2_dims=32):
        super().__init__()
        self.fc1 = nn.Linear(input_dims[0] + n_actions, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.q = nn.Linear(fc2_dims, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=beta)

    def forward(self, state, action):
        action_value = F.relu(self.fc1(T.cat([state, action], dim=1)))
        action_value = F.relu(self.fc2(action_value))
        return self.q(action_value)


class ValueNetwork(nn.Module):
    def __init__(self, beta, input_dims, fc1_dims=32, fc2_dims=32):
        super().__init__()
        self.fc1 = nn.Linear(*input_dims, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.v = nn.Linear(fc2_dims, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=beta)

    def forward(self, state):
        state_value = F.relu(self.fc1(state))
        state_value = F.relu(self.fc2(state_value))
        return self.v(state_value)


class ActorNetwork(nn.Module):
    def __init__(self, alpha, input_dims, max_action, fc1_dims=32, fc2_dims=32, n_actions=2):
        super().__init__()
        self.max_action = max_action
        self.reparam_noise = 1e-6
        self.fc1 = nn.Linear(*input_dims, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.mu = nn.Linear(fc2_dims, n_actions)
        self.sigma = nn.Linear(fc2_dims, n_actions)
        self.optimizer = optim.Adam(self.parameters(), lr=alpha)

    def forward(self, state):
        prob = F.relu(self.fc1(state))
        prob = F.relu(self.fc2(prob))
        mu = self.mu(prob)
        sigma = T.clamp(self.sigma(prob), min=self.reparam_noise, max=1)
        return mu, sigma

    def sample_normal(self, state, reparameterize=True):
        mu, sigma = self.forward(state)
        probabilities = Normal(mu, sigma)
        actions = probabilities.rsample() if reparameterize else probabilities.sample()
        action = T.tanh(actions) * T.tensor(self.max_action)
        log_probs = probabilities.log_prob(actions)
        log_probs -= T.log(1 - T.tanh(actions).pow(2) + self.reparam_noise)
        log_probs = log_probs.sum(1, keepdim=True)
        return action, log_probs


class Agent:
    def __init__(self, input_dims=[3], n_actions=2, max_action=1.0, gamma=0.99, tau=0.005, reward_scale=2):
        self.gamma, self.tau, self.scale = gamma, tau, reward_scale
        self.actor = ActorNetwork(3e-4, input_dims, max_action, n_actions=n_actions)
        self.critic_1 = CriticNetwork(3e-4, input_dims, n_actions)
        self.critic_2 = CriticNetwork(3e-4, input_dims, n_actions)
        self.value = ValueNetwork(3e-4, input_dims)
        self.target_value = ValueNetwork(3e-4, input_dims)
        self.update_network_parameters(tau=1)

    def update_network_parameters(self, tau=None):
        tau = self.tau if tau is None else tau
        target_value_state_dict = dict(self.target_value.named_parameters())
        value_state_dict = dict(self.value.named_parameters())
        for name in value_state_dict:
            value_state_dict[name] = tau * value_state_dict[name].clone() + (1 - tau) * target_value_state_dict[name].clone()
        self.target_value.load_state_dict(value_state_dict)

    def learn(self, state, action, reward, state_, done):
        value = self.value(state).view(-1)
        value_ = self.target_value(state_).view(-1)
        value_ = value_.masked_fill(done, 0.0)

        actions, log_probs = self.actor.sample_normal(state, reparameterize=False)
        log_probs = log_probs.view(-1)
        critic_value = T.min(self.critic_1(state, actions), self.critic_2(state, actions)).view(-1)
        self.value.optimizer.zero_grad()
        value_target = critic_value - log_probs
        value_loss = 0.5 * F.mse_loss(value, value_target)
        value_loss.backward(retain_graph=True)
        self.value.optimizer.step()

        actions, log_probs = self.actor.sample_normal(state, reparameterize=True)
        log_probs = log_probs.view(-1)
        critic_value = T.min(self.critic_1(state, actions), self.critic_2(state, actions)).view(-1)
        actor_loss = T.mean(log_probs - critic_value)
        self.actor.optimizer.zero_grad()
        actor_loss.backward(retain_graph=True)
        self.actor.optimizer.step()

        self.critic_1.optimizer.zero_grad()
        self.critic_2.optimizer.zero_grad()
        q_hat = self.scale * reward + self.gamma * value_
        q1_old_policy = self.critic_1(state, action).view(-1)
        q2_old_policy = self.critic_2(state, action).view(-1)
        critic_loss = 0.5 * F.mse_loss(q1_old_policy, q_hat) + 0.5 * F.mse_loss(q2_old_policy, q_hat)
        critic_loss.backward()
        self.critic_1.optimizer.step()
        self.critic_2.optimizer.step()
        self.update_network_parameters()
        return value_loss, actor_loss, critic_loss


agent = Agent()
state = T.randn(5, 3)
action = T.rand(5, 2) * 2 - 1
reward = T.randn(5)
state_ = T.randn(5, 3)
done = T.tensor([False, False, True, False, False])
value_loss, actor_loss, critic_loss = agent.learn(state, action, reward, state_, done)
actor_fc1_weight = agent.actor.fc1.weight.detach().clone()
