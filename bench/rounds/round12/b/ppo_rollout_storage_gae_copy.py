# label: safe
# why: RolloutStorage fills its preallocated buffers in place (copy_, index writes in compute_returns) only with values produced under torch.no_grad, and PPO later reads mini-batches of them, so none of these writes touch a live graph
# source: https://github.com/ikostrikov/pytorch-a2c-ppo-acktr-gail/blob/d4c68c1ce8d87a7c4ae7a7d88b54daa197785fc4/a2c_ppo_acktr/storage.py
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data.sampler import BatchSampler, SubsetRandomSampler

torch.manual_seed(0)


class RolloutStorage(object):
    def __init__(self, num_steps, num_processes, obs_shape, action_shape):
        self.obs = torch.zeros(num_steps + 1, num_processes, *obs_shape)
        self.rewards = torch.zeros(num_steps, num_processes, 1)
        self.value_preds = torch.zeros(num_steps + 1, num_processes, 1)
        self.returns = torch.zeros(num_steps + 1, num_processes, 1)
        self.action_log_probs = torch.zeros(num_steps, num_processes, 1)
        self.actions = torch.zeros(num_steps, num_processes, action_shape)
        self.masks = torch.ones(num_steps + 1, num_processes, 1)
        self.num_steps = num_steps
        self.step = 0

    def insert(self, obs, actions, action_log_probs, value_preds, rewards, masks):
        self.obs[self.step + 1].copy_(obs)
        self.actions[self.step].copy_(actions)
        self.action_log_probs[self.step].copy_(action_log_probs)
        self.value_preds[self.step].copy_(value_preds)
        self.rewards[self.step].copy_(rewards)
        self.masks[self.step + 1].copy_(masks)
        self.step = (self.step + 1) % self.num_steps

    def after_update(self):
        self.obs[0].copy_(self.obs[-1])
        self.masks[0].copy_(self.masks[-1])

    def compute_returns(self, next_value, gamma, gae_lambda):
        self.value_preds[-1] = next_value
        gae = 0
        for step in reversed(range(self.rewards.size(0))):
            delta = self.rewards[step] + gamma * self.value_preds[
                step + 1] * self.masks[step + 1] - self.value_preds[step]
            gae = delta + gamma * gae_lambda * self.masks[step + 1] * gae
            self.returns[step] = gae + self.value_preds[step]

    def feed_forward_generator(self, advantages, num_mini_batch):
        num_steps, num_processes = self.rewards.size()[0:2]
        batch_size = num_processes * num_steps
        mini_batch_size = batch_size // num_mini_batch
        sampler = BatchSampler(SubsetRandomSampler(range(batch_size)), mini_batch_size, drop_last=True)
        for indices in sampler:
            obs_batch = self.obs[:-1].view(-1, *self.obs.size()[2:])[indices]
            actions_batch = self.actions.view(-1, self.actions.size(-1))[indices]
            return_batch = self.returns[:-1].view(-1, 1)[indices]
            old_action_log_probs_batch = self.action_log_probs.view(-1, 1)[indices]
            adv_targ = advantages.view(-1, 1)[indices]
            yield obs_batch, actions_batch, return_batch, old_action_log_probs_batch, adv_targ


class Policy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, act_dim))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, 1))
        self.logstd = nn.Parameter(torch.zeros(act_dim))

    def dist(self, obs):
        return torch.distributions.Normal(self.actor(obs), self.logstd.exp())

    def act(self, obs):
        d = self.dist(obs)
        action = d.sample()
        return self.critic(obs), action, d.log_prob(action).sum(-1, keepdim=True)

    def get_value(self, obs):
        return self.critic(obs)

    def evaluate_actions(self, obs, action):
        d = self.dist(obs)
        return self.critic(obs), d.log_prob(action).sum(-1, keepdim=True), d.entropy().sum(-1).mean()


num_steps, num_processes, obs_dim, act_dim = 6, 2, 4, 2
actor_critic = Policy(obs_dim, act_dim)
optimizer = optim.Adam(actor_critic.parameters(), lr=3e-4, eps=1e-5)
rollouts = RolloutStorage(num_steps, num_processes, (obs_dim,), act_dim)
rollouts.obs[0].copy_(torch.randn(num_processes, obs_dim))

for update in range(2):
    for step in range(num_steps):
        with torch.no_grad():
            value, action, action_log_prob = actor_critic.act(rollouts.obs[step])
        obs = torch.randn(num_processes, obs_dim)
        reward = -action.pow(2).sum(-1, keepdim=True)
        masks = torch.tensor([[0.0] if step == 3 else [1.0] for _ in range(num_processes)])
        rollouts.insert(obs, action, action_log_prob, value, reward, masks)

    with torch.no_grad():
        next_value = actor_critic.get_value(rollouts.obs[-1]).detach()
    rollouts.compute_returns(next_value, 0.99, 0.95)

    advantages = rollouts.returns[:-1] - rollouts.value_preds[:-1]
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-5)
    for e in range(2):
        for sample in rollouts.feed_forward_generator(advantages, 2):
            obs_batch, actions_batch, return_batch, old_action_log_probs_batch, adv_targ = sample
            values, action_log_probs, dist_entropy = actor_critic.evaluate_actions(obs_batch, actions_batch)
            ratio = torch.exp(action_log_probs - old_action_log_probs_batch)
            surr1 = ratio * adv_targ
            surr2 = torch.clamp(ratio, 0.8, 1.2) * adv_targ
            action_loss = -torch.min(surr1, surr2).mean()
            value_loss = 0.5 * (return_batch - values).pow(2).mean()
            optimizer.zero_grad()
            (value_loss * 0.5 + action_loss - dist_entropy * 0.01).backward()
            nn.utils.clip_grad_norm_(actor_critic.parameters(), 0.5)
            optimizer.step()
    rollouts.after_update()

final_returns = rollouts.returns.clone()
