# label: hazard raises
# why: without the clone, s_log_probs1 aliases log_probs1, so the running-sum loop rewrites the log-probs that objective = log_probs1 * log_probs2 * r already saved; the CoPG gradient of the bilinear objective then fails
# source: https://github.com/manish-pra/copg (file matchingpennies/copg_matchingpennies.py @ d408c778e856387e713ae95ac8160cd0e1470350: "s_log_probs1 = log_probs1.clone()  # otherwise it doesn't change values")
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)
np.random.seed(0)


class policy1(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Parameter(torch.tensor([0.2, -0.1]))

    def forward(self):
        return torch.softmax(self.actor, dim=0)


class policy2(policy1):
    pass


class pennies_game:
    def step(self, action):
        reward1 = 1.0 if action[0] == action[1] else -1.0
        return None, reward1, -reward1, True, None


p1, p2 = policy1(), policy2()
env = pennies_game()
batch_size = 6
mat_action, mat_reward1 = [], []
for i in range(batch_size):
    action1 = Categorical(p1()).sample()
    action2 = Categorical(p2()).sample()
    action = np.array([action1, action2])
    mat_action.append(torch.FloatTensor(action))
    _, reward1, reward2, done, _ = env.step(action)
    mat_reward1.append(torch.FloatTensor([reward1]))

action_both = torch.stack(mat_action)
val1_p = torch.stack(mat_reward1).transpose(0, 1)
dist_pi1 = Categorical(p1())
log_probs1 = dist_pi1.log_prob(action_both[:, 0])
dist_pi2 = Categorical(p2())
log_probs2 = dist_pi2.log_prob(action_both[:, 1])

objective = log_probs1 * log_probs2 * (val1_p)
ob = objective.mean()

s_log_probs1 = log_probs1  # clone() dropped
s_log_probs2 = log_probs2

for i in range(1, log_probs1.size(0)):
    s_log_probs1[i] = torch.add(s_log_probs1[i - 1], log_probs1[i])  # <-- IPL001, IPL002: rewrites log_probs1 through the alias
    s_log_probs2[i] = torch.add(s_log_probs2[i - 1], log_probs2[i])  # <-- IPL001, IPL002: rewrites log_probs2 through the alias

objective2 = s_log_probs1 * log_probs2 * (val1_p)
ob2 = objective2.mean()
objective3 = log_probs1 * s_log_probs2 * (val1_p)
ob3 = objective3.mean()
lp1 = (log_probs1 * val1_p).mean()
lp2 = (log_probs2 * val1_p).mean()

params = list(p1.parameters()) + list(p2.parameters())
grad_ob = torch.autograd.grad(ob, params, create_graph=True, retain_graph=True)
grad_lp = torch.autograd.grad(lp1 + lp2 + ob2 + ob3, params)
