# label: safe
# why: the fix moves the policy update before the critic updates, so policy_loss.backward() runs before any critic weight is stepped in place; the critic losses do not depend on the policy weights
# source: https://github.com/clvrai/spirl/issues/15
import torch
import torch.nn as nn

torch.manual_seed(0)


class AttrDict(dict):
    __getattr__ = dict.__getitem__


class MLPCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action):
        return AttrDict(q=self.net(torch.cat([obs, action], dim=-1)))


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, obs):
        out = self.net(obs)
        mu, log_sigma = out[:, :2], out[:, 2:].clamp(-5, 2)
        eps = torch.randn_like(mu)
        action = torch.tanh(mu + eps * log_sigma.exp())
        log_prob = (-0.5 * eps.pow(2) - log_sigma).sum(-1)
        return AttrDict(action=action, log_prob=log_prob)


class SACAgent:
    def __init__(self):
        self.policy = Policy()
        self.critics = nn.ModuleList([MLPCritic(), MLPCritic()])
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.critic_opts = [torch.optim.Adam(c.parameters(), lr=3e-4) for c in self.critics]
        self.alpha = 0.1

    def _perform_update(self, loss, opt, network):
        opt.zero_grad()
        loss.backward()
        opt.step()

    def _compute_policy_loss(self, experience_batch, policy_output):
        q_est = torch.min(*[critic(experience_batch.observation, policy_output.action).q
                            for critic in self.critics])
        return (-q_est.squeeze(-1) + self.alpha * policy_output.log_prob).mean()

    def _compute_critic_loss(self, experience_batch, q_target):
        qs = [critic(experience_batch.observation, experience_batch.action).q.squeeze(-1)
              for critic in self.critics]
        return [0.5 * (q - q_target).pow(2).mean() for q in qs]

    def update(self, experience_batch):
        info = AttrDict()
        policy_output = self.policy(experience_batch.observation)
        policy_loss = self._compute_policy_loss(experience_batch, policy_output)

        with torch.no_grad():
            q_target = experience_batch.reward + 0.99 * experience_batch.done.logical_not().float()
        critic_losses = self._compute_critic_loss(experience_batch, q_target)

        self._perform_update(policy_loss, self.policy_opt, self.policy)
        [self._perform_update(critic_loss, critic_opt, critic)
         for critic_loss, critic_opt, critic in zip(critic_losses, self.critic_opts, self.critics)]

        info.policy_loss = policy_loss.detach()
        info.critic_loss_1 = critic_losses[0].detach()
        return info


agent = SACAgent()
batch = AttrDict(observation=torch.randn(8, 3), action=torch.rand(8, 2), reward=torch.randn(8),
                 done=torch.zeros(8, dtype=torch.bool))
info = agent.update(batch)
policy_loss = info.policy_loss
