# label: safe
# why: the critic passed to the constructor is stepped only after both backward passes, so no graph needs weights that changed.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], dim=1))


class Policy(nn.Module):
    def __init__(self, actor, critic, gamma=0.99):
        super().__init__()
        self.actor, self.critic, self.gamma = actor, critic, gamma
        self.actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-3)
        self.critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-3)

    def learn(self, obs, act, target_q):
        a = self.actor(obs)
        both = self.critic(torch.cat([obs, obs]), torch.cat([act, a]))
        current_q, current_qa = both.split(obs.shape[0])
        actor_loss = -current_qa.mean()
        critic_loss = F.mse_loss(current_q, target_q)
        self.critic_optim.zero_grad()
        critic_loss.backward(retain_graph=True)
        critic_grads = [p.grad.clone() for p in self.critic.parameters()]
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        for p, g in zip(self.critic.parameters(), critic_grads):
            p.grad = g
        self.critic_optim.step()
        return actor_loss.detach(), critic_loss.detach()


def main():
    actor = nn.Linear(3, 2)
    critic = Critic()
    policy = Policy(actor, critic)
    return policy.learn(torch.randn(8, 3), torch.randn(8, 2), torch.randn(8, 1))


actor_loss, critic_loss = main()
