# label: safe
# why: advantages is a fresh zeros buffer filled slot by slot with new graph values; nothing saved for backward is overwritten, so indexed assignment equals an out-of-place build
# source: https://github.com/Farama-Foundation/Gymnasium/issues/1494
import torch
import torch.nn as nn

torch.manual_seed(0)


class A2C(nn.Module):
    def __init__(self, n_features, n_actions, n_envs):
        super().__init__()
        self.n_envs = n_envs
        self.critic = nn.Sequential(nn.Linear(n_features, 8), nn.ReLU(), nn.Linear(8, 1))
        self.actor = nn.Sequential(nn.Linear(n_features, 8), nn.ReLU(), nn.Linear(8, n_actions))

    def forward(self, x):
        return self.critic(x), self.actor(x)

    def select_action(self, x):
        state_values, action_logits = self.forward(x)
        dist = torch.distributions.Categorical(logits=action_logits)
        actions = dist.sample()
        return actions, dist.log_prob(actions), state_values.squeeze(-1), dist.entropy()

    def get_losses(self, rewards, action_log_probs, value_preds, entropy, masks, gamma, lam, ent_coef):
        T = len(rewards)
        advantages = torch.zeros(T, self.n_envs)
        gae = 0.0
        for t in reversed(range(T - 1)):
            td_error = rewards[t] + gamma * masks[t] * value_preds[t + 1] - value_preds[t]
            gae = td_error + gamma * lam * masks[t] * gae
            advantages[t] = gae
        critic_loss = advantages.pow(2).mean()
        actor_loss = -(advantages.detach() * action_log_probs).mean() - ent_coef * entropy.mean()
        return critic_loss, actor_loss


n_envs, T = 3, 5
agent = A2C(n_features=4, n_actions=2, n_envs=n_envs)
critic_optim = torch.optim.RMSprop(agent.critic.parameters(), lr=0.005)
actor_optim = torch.optim.RMSprop(agent.actor.parameters(), lr=0.001)

ep_value_preds = torch.zeros(T, n_envs)
ep_rewards = torch.zeros(T, n_envs)
ep_action_log_probs = torch.zeros(T, n_envs)
masks = torch.zeros(T, n_envs)
entropies = []
states = torch.randn(n_envs, 4)
for step in range(T):
    actions, log_probs, state_value, entropy = agent.select_action(states)
    ep_value_preds[step] = state_value
    ep_rewards[step] = torch.rand(n_envs)
    ep_action_log_probs[step] = log_probs
    masks[step] = (torch.rand(n_envs) > 0.2).float()
    entropies.append(entropy)
    states = states + 0.1 * torch.randn(n_envs, 4)

critic_loss, actor_loss = agent.get_losses(
    ep_rewards, ep_action_log_probs, ep_value_preds, torch.stack(entropies), masks, 0.99, 0.95, 0.01
)
critic_optim.zero_grad()
critic_loss.backward(retain_graph=True)
critic_optim.step()
actor_optim.zero_grad()
actor_loss.backward()
actor_optim.step()
