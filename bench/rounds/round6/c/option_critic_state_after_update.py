# label: safe
# why: after the fixes, get_action() reads state.data (no gradient into the features net) and the next state is computed only after optim.step(), so the step never changes weights a pending backward needs.
# source: https://github.com/lweitkamp/option-critic-pytorch/commit/7d323e61ac531438593aa9999d48ccc288d032c9 (with commit 38728db7534ca4f8f0043d824ac3a30ddf35f2d0; issue https://github.com/lweitkamp/option-critic-pytorch/issues/5)
import random
from argparse import Namespace
from math import exp

import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Categorical

torch.manual_seed(0)
random.seed(0)


def to_tensor(obs):
    return torch.as_tensor(obs, dtype=torch.float32)


class OptionCriticFeatures(nn.Module):
    def __init__(self, in_features, num_actions, num_options, temperature=1.0,
                 eps_start=1.0, eps_min=0.1, eps_decay=int(1e6), eps_test=0.05, testing=False):
        super(OptionCriticFeatures, self).__init__()
        self.in_features = in_features
        self.num_actions = num_actions
        self.num_options = num_options
        self.testing = testing
        self.temperature = temperature
        self.eps_min = eps_min
        self.eps_start = eps_start
        self.eps_decay = eps_decay
        self.eps_test = eps_test
        self.num_steps = 0

        self.features = nn.Sequential(
            nn.Linear(in_features, 16),
            nn.ReLU(),
            nn.Linear(16, 12),
            nn.ReLU()
        )
        self.Q = nn.Linear(12, num_options)                 # Policy-Over-Options
        self.terminations = nn.Linear(12, num_options)      # Option-Termination
        self.options_W = nn.Parameter(torch.zeros(num_options, 12, num_actions))
        self.options_b = nn.Parameter(torch.zeros(num_options, num_actions))

    def get_state(self, obs):
        if obs.ndim < 2:
            obs = obs.unsqueeze(0)
        return self.features(obs)

    def get_Q(self, state):
        return self.Q(state)

    def predict_option_termination(self, state, current_option):
        termination = self.terminations(state)[:, current_option].sigmoid()
        option_termination = Bernoulli(termination).sample()
        Q = self.get_Q(state)
        next_option = Q.argmax(dim=-1)
        return bool(option_termination.item()), next_option.item()

    def get_terminations(self, state):
        return self.terminations(state).sigmoid()

    def get_action(self, state, option):
        logits = state.data @ self.options_W[option] + self.options_b[option]
        action_dist = (logits / self.temperature).softmax(dim=-1)
        action_dist = Categorical(action_dist)
        action = action_dist.sample()
        logp = action_dist.log_prob(action)
        entropy = action_dist.entropy()
        return action.item(), logp, entropy

    def greedy_option(self, state):
        Q = self.get_Q(state)
        return Q.argmax(dim=-1).item()

    @property
    def epsilon(self):
        if not self.testing:
            eps = self.eps_min + (self.eps_start - self.eps_min) * exp(-self.num_steps / self.eps_decay)
            self.num_steps += 1
        else:
            eps = self.eps_test
        return eps


def critic_loss_fn(model, model_prime, data_batch, args):
    obs, options, rewards, next_obs, dones = data_batch
    batch_idx = torch.arange(len(options)).long()
    options = torch.LongTensor(options)
    rewards = torch.FloatTensor(rewards)
    masks = 1 - torch.FloatTensor(dones)

    states = model.get_state(to_tensor(obs)).squeeze(0)
    Q = model.get_Q(states)
    next_states_prime = model_prime.get_state(to_tensor(next_obs)).squeeze(0)
    next_Q_prime = model_prime.get_Q(next_states_prime)
    next_states = model.get_state(to_tensor(next_obs)).squeeze(0)
    next_termination_probs = model.get_terminations(next_states).detach()
    next_options_term_prob = next_termination_probs[batch_idx, options]

    gt = rewards + masks * args.gamma * \
        ((1 - next_options_term_prob) * next_Q_prime[batch_idx, options] + next_options_term_prob * next_Q_prime.max(dim=-1)[0])
    td_err = (Q[batch_idx, options] - gt.detach()).pow(2).mul(0.5).mean()
    return td_err


def actor_loss_fn(obs, option, logp, entropy, reward, done, next_obs, model, model_prime, args):
    state = model.get_state(to_tensor(obs))
    next_state = model.get_state(to_tensor(next_obs))
    next_state_prime = model_prime.get_state(to_tensor(next_obs))

    option_term_prob = model.get_terminations(state)[:, option]
    next_option_term_prob = model.get_terminations(next_state)[:, option].detach()

    Q = model.get_Q(state).detach().squeeze()
    next_Q_prime = model_prime.get_Q(next_state_prime).detach().squeeze()

    gt = reward + (1 - done) * args.gamma * \
        ((1 - next_option_term_prob) * next_Q_prime[option] + next_option_term_prob * next_Q_prime.max(dim=-1)[0])
    termination_loss = option_term_prob * (Q[option].detach() - Q.max(dim=-1)[0].detach() + args.termination_reg) * (1 - done)
    policy_loss = -logp * (gt.detach() - Q[option]) - args.entropy_reg * entropy
    actor_loss = termination_loss + policy_loss
    return actor_loss


class ToyEnv:
    def __init__(self):
        self.t = 0

    def reset(self):
        self.t = 0
        return torch.randn(4).tolist()

    def step(self, action):
        self.t += 1
        return torch.randn(4).tolist(), float(action), self.t >= 6, {}


args = Namespace(gamma=0.99, termination_reg=0.01, entropy_reg=0.01, batch_size=2,
                 update_frequency=1, freeze_interval=3, num_options=2, learning_rate=1e-3)


def run(args):
    env = ToyEnv()
    option_critic = OptionCriticFeatures(in_features=4, num_actions=3, num_options=args.num_options)
    option_critic_prime = OptionCriticFeatures(in_features=4, num_actions=3, num_options=args.num_options)
    option_critic_prime.load_state_dict(option_critic.state_dict())
    optim = torch.optim.RMSprop(option_critic.parameters(), lr=args.learning_rate)
    buffer = []

    steps = 0
    rewards = 0
    obs = env.reset()
    state = option_critic.get_state(to_tensor(obs))
    greedy_option = option_critic.greedy_option(state)
    current_option = 0
    done = False
    option_termination = True
    while not done:
        epsilon = option_critic.epsilon
        if option_termination:
            current_option = random.randrange(args.num_options) if random.random() < epsilon else greedy_option

        action, logp, entropy = option_critic.get_action(state, current_option)
        next_obs, reward, done, _ = env.step(action)
        buffer.append((obs, current_option, reward, next_obs, done))
        rewards += reward

        actor_loss, critic_loss = None, None
        if len(buffer) > args.batch_size:
            actor_loss = actor_loss_fn(obs, current_option, logp, entropy,
                                       reward, done, next_obs, option_critic, option_critic_prime, args)
            loss = actor_loss
            if steps % args.update_frequency == 0:
                data_batch = [list(x) for x in zip(*buffer[-args.batch_size:])]
                critic_loss = critic_loss_fn(option_critic, option_critic_prime, data_batch, args)
                loss += critic_loss

            optim.zero_grad()
            loss.backward()
            optim.step()

            if steps % args.freeze_interval == 0:
                option_critic_prime.load_state_dict(option_critic.state_dict())

        state = option_critic.get_state(to_tensor(next_obs))
        option_termination, greedy_option = option_critic.predict_option_termination(state, current_option)

        steps += 1
        obs = next_obs
    return option_critic


option_critic = run(args)
final_Q_weight = option_critic.Q.weight.detach().clone()
