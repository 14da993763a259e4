# label: hazard raises no-twin
# why: SAC.train_continuous builds actor_loss through self.critic/self.critic2 (and the shared rep_net), then critic_oplr.step(critic_loss) updates those weights in place before actor_oplr.step(actor_loss) backpropagates through the Linear layers that saved them.
# source: https://github.com/StepNeverStop/RLs/commit/ab5fffcc2e06214dc75a850aeaf06aa12c5dc1f9 (issue https://github.com/StepNeverStop/RLs/issues/44)
import torch as t
import torch.nn as nn

t.manual_seed(0)


class OPLR:
    def __init__(self, models, lr):
        self.params = []
        if not isinstance(models, (list, tuple)):
            models = [models]
        for model in models:
            self.params.extend(list(model.parameters()))
        self.optimizer = t.optim.Adam(self.params, lr)
        self.step = self._make_step_function()

    def _make_step_function(self):
        def func(loss):
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return func


class CriticQvalueOne(nn.Module):
    def __init__(self, feat_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feat_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x, a):
        return self.net(t.cat((x, a), -1))


class ActorCts(nn.Module):
    def __init__(self, feat_dim, action_dim):
        super().__init__()
        self.share = nn.Sequential(nn.Linear(feat_dim, 16), nn.ReLU())
        self.mu = nn.Linear(16, action_dim)
        self.log_std = nn.Linear(16, action_dim)

    def forward(self, x):
        x = self.share(x)
        return self.mu(x), self.log_std(x).clamp(-20, 2)


def squash_rsample(mu, log_std):
    pi = mu + t.randn_like(mu) * log_std.exp()
    log_pi = (-0.5 * ((pi - mu) / log_std.exp()).square() - log_std).sum(-1, keepdim=True)
    pi_squash = t.tanh(pi)
    log_pi = log_pi - t.log(1 - pi_squash.square() + 1e-6).sum(-1, keepdim=True)
    return pi_squash, log_pi


def q_target_func(reward, gamma, done, q_next):
    return (reward + gamma * (1 - done) * q_next).detach()


class SAC:
    def __init__(self, obs_dim=5, feat_dim=8, a_dim=2, gamma=0.99, alpha=0.2):
        self.rep_net = nn.Linear(obs_dim, feat_dim)
        self._target_rep_net = nn.Linear(obs_dim, feat_dim)
        self.actor = ActorCts(feat_dim, a_dim)
        self.critic = CriticQvalueOne(feat_dim, a_dim)
        self.critic2 = CriticQvalueOne(feat_dim, a_dim)
        self.critic_target = CriticQvalueOne(feat_dim, a_dim)
        self.critic2_target = CriticQvalueOne(feat_dim, a_dim)
        self.gamma = gamma
        self.alpha = alpha
        self.actor_oplr = OPLR(self.actor, 3e-4)
        self.critic_oplr = OPLR([self.critic, self.critic2, self.rep_net], 3e-4)

    def train_continuous(self, BATCH):
        feat = self.rep_net(BATCH['obs'])
        feat_ = self._target_rep_net(BATCH['obs_'])
        mu, log_std = self.actor(feat)
        pi, log_pi = squash_rsample(mu, log_std)
        target_mu, target_log_std = self.actor(feat_)
        target_pi, target_log_pi = squash_rsample(target_mu, target_log_std)
        q1 = self.critic(feat, BATCH['action'])
        q2 = self.critic2(feat, BATCH['action'])
        q_s_pi = t.minimum(self.critic(feat, pi), self.critic2(feat, pi))
        q_target = t.minimum(self.critic_target(feat_, target_pi), self.critic2_target(feat_, target_pi))
        dc_r = q_target_func(BATCH['reward'], self.gamma, BATCH['done'], q_target - self.alpha * target_log_pi)
        q1_loss = (q1 - dc_r).square().mean()
        q2_loss = (q2 - dc_r).square().mean()
        critic_loss = 0.5 * q1_loss + 0.5 * q2_loss
        actor_loss = -(q_s_pi - self.alpha * log_pi).mean()

        self.critic_oplr.step(critic_loss)  # <-- IPL001
        self.actor_oplr.step(actor_loss)
        return critic_loss.detach(), actor_loss.detach()


def main():
    agent = SAC()
    BATCH = {
        'obs': t.randn(16, 5), 'obs_': t.randn(16, 5), 'action': t.rand(16, 2) * 2 - 1,
        'reward': t.randn(16, 1), 'done': t.zeros(16, 1),
    }
    agent.train_continuous(BATCH)


main()
