# label: hazard raises no-twin
# why: the machine policy consumes the job policy's node embeddings, but update() steps the job optimizer (in-place weight update) before mch_loss_sum.backward(retain_graph=True) walks back through the job policy's saved weights
# source: https://github.com/Lei-Kun/End-to-end-DRL-for-FJSP/issues/3
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.categorical import Categorical

torch.manual_seed(0)


class GraphCNN(nn.Module):
    def __init__(self, input_dim, hidden_dim, num_layers=2):
        super().__init__()
        self.mlps = nn.ModuleList([nn.Linear(input_dim if l == 0 else hidden_dim, hidden_dim) for l in range(num_layers)])

    def forward(self, x, graph_pool, adj):
        h = x
        for mlp in self.mlps:
            h = F.relu(mlp(torch.bmm(adj, h)))
        h_pooled = torch.bmm(graph_pool, h)
        return h_pooled.squeeze(1), h


class Job_Actor(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.encoder = GraphCNN(input_dim, hidden_dim)
        self.actor = nn.Sequential(nn.Linear(hidden_dim * 2, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, 1))
        self.critic = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, 1))

    def forward(self, x, graph_pool, adj, candidate, mask, old_action):
        h_pooled, h_nodes = self.encoder(x, graph_pool, adj)
        candidate_feature = torch.gather(h_nodes, 1, candidate.unsqueeze(-1).expand(-1, -1, h_nodes.size(-1)))
        concateFea = torch.cat((candidate_feature, h_pooled.unsqueeze(1).expand_as(candidate_feature)), dim=-1)
        candidate_scores = self.actor(concateFea).squeeze(-1).masked_fill(mask, float('-inf'))
        pi = F.softmax(candidate_scores, dim=1)
        dist = Categorical(pi)
        log_a = dist.log_prob(old_action)
        action_node = candidate_feature[torch.arange(len(old_action)), old_action]
        v = self.critic(h_pooled)
        return dist.entropy(), v, log_a, action_node, h_pooled


class Mch_Actor(nn.Module):
    def __init__(self, hidden_dim, n_m):
        super().__init__()
        self.mch_emb = nn.Parameter(torch.randn(n_m, hidden_dim) * 0.1)
        self.attn = nn.Linear(hidden_dim * 2, hidden_dim)

    def forward(self, action_node, hx, mch_time):
        q = torch.tanh(self.attn(torch.cat([action_node, hx], dim=-1)))
        scores = q @ self.mch_emb.t() - mch_time
        return F.softmax(scores, dim=-1)


class PPO:
    def __init__(self, n_j, n_m, input_dim=2, hidden_dim=16, lr=1e-3, eps_clip=0.2):
        self.eps_clip = eps_clip
        self.policy_job = Job_Actor(input_dim, hidden_dim)
        self.policy_mch = Mch_Actor(hidden_dim, n_m)
        self.job_optimizer = torch.optim.Adam(self.policy_job.parameters(), lr=lr)
        self.mch_optimizer = torch.optim.Adam(self.policy_mch.parameters(), lr=lr)
        self.MSE = nn.MSELoss()

    def update(self, memories, rewards_all_env):
        job_log_prob, mch_log_prob, val, job_entropy, mch_entropies = [], [], [], [], []
        for i in range(len(memories['fea'])):
            a_entropy, v, log_a, action_node, hx = self.policy_job(
                memories['fea'][i], memories['graph_pool'], memories['adj'][i], memories['candidate'][i],
                memories['mask'][i], memories['action'][i])
            pi_mch = self.policy_mch(action_node, hx, memories['mch_time'][i])
            val.append(v)
            dist = Categorical(pi_mch)
            mch_log_prob.append(dist.log_prob(memories['mch'][i]))
            mch_entropies.append(dist.entropy())
            job_entropy.append(a_entropy)
            job_log_prob.append(log_a)

        job_log_prob = torch.stack(job_log_prob, 0).permute(1, 0)
        job_log_old_prob = torch.stack(memories['job_logprobs'], 0).permute(1, 0)
        mch_log_prob = torch.stack(mch_log_prob, 0).permute(1, 0)
        mch_log_old_prob = torch.stack(memories['mch_logprobs'], 0).permute(1, 0)
        val = torch.stack(val, 0).squeeze(-1).permute(1, 0)
        job_entropy = torch.stack(job_entropy, 0).permute(1, 0)
        mch_entropies = torch.stack(mch_entropies, 0).permute(1, 0)

        job_loss_sum = 0
        mch_loss_sum = 0
        for j in range(len(rewards_all_env)):
            job_ratios = torch.exp(job_log_prob[j] - job_log_old_prob[j].detach())
            mch_ratios = torch.exp(mch_log_prob[j] - mch_log_old_prob[j].detach())
            advantages = rewards_all_env[j] - val[j].detach()
            job_surr1 = job_ratios * advantages
            job_surr2 = torch.clamp(job_ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            job_v_loss = self.MSE(val[j], rewards_all_env[j])
            job_loss_sum += -1 * torch.min(job_surr1, job_surr2) + 0.5 * job_v_loss - 0.01 * job_entropy[j]
            mch_surr1 = mch_ratios * advantages
            mch_surr2 = torch.clamp(mch_ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            mch_loss_sum += -1 * torch.min(mch_surr1, mch_surr2) - 0.01 * mch_entropies[j]

        self.job_optimizer.zero_grad()
        job_loss_sum.mean().backward(retain_graph=True)
        self.job_optimizer.step()  # <-- IPL001: updates job-policy weights that mch_loss_sum's graph still needs
        self.mch_optimizer.zero_grad()
        mch_loss_sum.mean().backward(retain_graph=True)
        self.mch_optimizer.step()
        return job_loss_sum.mean().detach(), mch_loss_sum.mean().detach()


n_j, n_m, batch, steps = 3, 2, 2, 3
n_nodes = n_j * n_m
ppo = PPO(n_j, n_m)
memories = {'fea': [], 'adj': [], 'candidate': [], 'mask': [], 'action': [], 'mch': [], 'mch_time': [],
            'job_logprobs': [], 'mch_logprobs': [], 'graph_pool': torch.full((batch, 1, n_nodes), 1.0 / n_nodes)}
for t in range(steps):
    memories['fea'].append(torch.rand(batch, n_nodes, 2))
    adj = (torch.rand(batch, n_nodes, n_nodes) > 0.6).float() + torch.eye(n_nodes)
    memories['adj'].append(adj / adj.sum(-1, keepdim=True))
    memories['candidate'].append(torch.tensor([[0, 2, 4]] * batch))
    memories['mask'].append(torch.tensor([[False, False, t == 2]] * batch))
    memories['action'].append(torch.tensor([0, 1]))
    memories['mch'].append(torch.tensor([1, 0]))
    memories['mch_time'].append(torch.rand(batch, n_m))
    memories['job_logprobs'].append(torch.log(torch.full((batch,), 0.4)))
    memories['mch_logprobs'].append(torch.log(torch.full((batch,), 0.5)))
rewards_all_env = torch.randn(batch, steps)
job_loss, mch_loss = ppo.update(memories, rewards_all_env)
