# label: hazard raises no-twin
# why: pi_loss is built through the Q network, then q_optimizer.step() rewrites Q's weights in place before pi_loss.backward() needs them.
# source: https://github.com/kashif/firedup/issues/11
import torch
import torch.nn as nn

torch.manual_seed(0)


def mlp(x_dim, hidden_sizes, activation=nn.ReLU, output_activation=None):
    layers = []
    sizes = [x_dim] + list(hidden_sizes)
    for i in range(len(sizes) - 2):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), activation()]
    layers += [nn.Linear(sizes[-2], sizes[-1])]
    if output_activation is not None:
        layers += [output_activation()]
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden_sizes=(16, 16), act_limit=1.0):
        super().__init__()
        self.act_limit = act_limit
        self.policy = mlp(obs_dim, list(hidden_sizes) + [act_dim], output_activation=nn.Tanh)
        self.q = mlp(obs_dim + act_dim, list(hidden_sizes) + [1])

    def forward(self, x, a):
        pi = self.act_limit * self.policy(x)
        q = self.q(torch.cat((x, a), dim=1)).squeeze(1)
        q_pi = self.q(torch.cat((x, pi), dim=1)).squeeze(1)
        return pi, q, q_pi


main = ActorCritic(3, 2)
target = ActorCritic(3, 2)
target.load_state_dict(main.state_dict())
pi_optimizer = torch.optim.Adam(main.policy.parameters(), lr=1e-3)
q_optimizer = torch.optim.Adam(main.q.parameters(), lr=1e-3)

batch = {
    "obs1": torch.randn(8, 3),
    "obs2": torch.randn(8, 3),
    "acts": torch.rand(8, 2) * 2 - 1,
    "rews": torch.randn(8),
    "done": torch.zeros(8),
}
gamma, polyak = 0.99, 0.995

_, q, q_pi = main(batch["obs1"], batch["acts"])
_, _, q_pi_targ = target(batch["obs2"], batch["acts"])
backup = (batch["rews"] + gamma * (1 - batch["done"]) * q_pi_targ).detach()

pi_loss = -q_pi.mean()
q_loss = ((q - backup) ** 2).mean()

q_optimizer.zero_grad()
q_loss.backward()
q_optimizer.step()  # <-- IPL001: updates Q weights that pi_loss's graph (through q_pi) saved

pi_optimizer.zero_grad()
pi_loss.backward()
pi_optimizer.step()

with torch.no_grad():
    for p_main, p_targ in zip(main.parameters(), target.parameters()):
        p_targ.mul_(polyak).add_((1 - polyak) * p_main)
