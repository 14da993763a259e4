# label: safe
# why: `value_[done] = 0.0` writes into the target-value Linear output and `log_probs -= log(1 - action^2)` writes into Normal.log_prob's result, but neither tensor is saved by the op that produced it (addmm saves its inputs, the final subtraction saves nothing), so backward stays correct.
# source: https://github.com/philtabor/Youtube-Code-Repository/blob/cc8164a2c5016e3f0f97329e6d5c340a0f8c46cd/ReinforcementLearning/PolicyGradient/SAC/sac_torch.py
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
        log_probs -= T.log(1 - action.pow(2) + self.reparam_noise)
        log_probs = log_probs.sum(1, keepdim=True)
        return action, log_probs


class Agent:
    def __init__(self, input_dims=[8], n_actions=2, gamma=0.99, reward_scale=2):
        self.gamma = gamma
        self.scale = reward_scale
        self.actor = ActorNetwork(3e-4, input_dims, n_actions=n_actions, max_action=1.0)
        self.critic_1 = CriticNetwork(3e-4, input_dims, n_actions=n_actions)
        self.critic_2 = CriticNetwork(3e-4, input_dims, n_actions=n_actions)
        self.value = ValueNetwork(3e-4, input_dims)
        self.target_value = ValueNetwork(3e-4, input_dims)
        self.target_value.load_state_dict(self.value.state_dict())

    def learn(self, state, action, reward, state_, done):
        value = self.value(state).view(-1)
        value_ = self.target_value(state_).view(-1)
        value_[done] = 0.0

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
        actor_grad = self.actor.mu.weight.grad.clone()
        self.actor.optimizer.step()

        self.critic_1.optimizer.zero_grad()
        self.critic_2.optimizer.zero_grad()
        q_hat = self.scale * reward + self.gamma * value_
        q1_old_policy = self.critic_1(state, action).view(-1)
        q2_old_policy = self.critic_2(state, action).view(-1)
        critic_loss = 0.5 * F.mse_loss(q1_old_policy, q_hat) + 0.5 * F.mse_loss(q2_old_policy, q_hat)
        critic_loss.backward()
        critic_grad = self.critic_1.q.weight.grad.clone()
        return value_loss.detach(), actor_grad, critic_grad


def main():
    agent = Agent()
    state = T.randn(16, 8)
    state_ = T.randn(16, 8)
    action = T.rand(16, 2) * 2 - 1
    reward = T.randn(16)
    done = T.rand(16) < 0.25
    return agent.learn(state, action, reward, state_, done)


value_loss, actor_grad, critic_grad = main()
