# label: safe
# why: fixed REDQ ordering: policy_loss.backward() runs (with the Q nets frozen) before any optimizer steps the Q weights in place
# source: https://github.com/watchernyu/REDQ/pull/2 (fixed redq/algos/redq_sac.py at commit 75e013da3b3ce39aad694488ad0c86f3d1705b06)
import torch
import torch.nn as nn

torch.manual_seed(0)


def mlp(i, o, h=16):
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = mlp(obs_dim, 2 * act_dim)

    def forward(self, obs):
        mean, log_std = self.net(obs).chunk(2, dim=-1)
        log_std = log_std.clamp(-5, 2)
        std = log_std.exp()
        pretanh = mean + std * torch.randn_like(mean)
        a = torch.tanh(pretanh)
        log_prob = (-0.5 * ((pretanh - mean) / std) ** 2 - log_std).sum(-1, keepdim=True)
        log_prob = log_prob - torch.log(1 - a.pow(2) + 1e-6).sum(-1, keepdim=True)
        return a, mean, log_std, log_prob, std, pretanh


class REDQSACAgent:
    def __init__(self, obs_dim=3, act_dim=2, num_Q=4, utd_ratio=2, policy_update_delay=1):
        self.num_Q = num_Q
        self.utd_ratio = utd_ratio
        self.policy_update_delay = policy_update_delay
        self.policy_net = TanhGaussianPolicy(obs_dim, act_dim)
        self.q_net_list = [mlp(obs_dim + act_dim, 1) for _ in range(num_Q)]
        self.q_optimizer_list = [torch.optim.Adam(q.parameters(), lr=3e-3) for q in self.q_net_list]
        self.policy_optimizer = torch.optim.Adam(self.policy_net.parameters(), lr=3e-3)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=3e-3)
        self.alpha = self.log_alpha.exp().item()
        self.target_entropy = -act_dim
        self.mse_criterion = nn.MSELoss()
        self.obs_dim, self.act_dim = obs_dim, act_dim

    def sample_data(self, batch_size):
        obs = torch.randn(batch_size, self.obs_dim)
        obs_next = torch.randn(batch_size, self.obs_dim)
        acts = torch.rand(batch_size, self.act_dim) * 2 - 1
        rews = torch.randn(batch_size, 1)
        done = torch.zeros(batch_size, 1)
        return obs, obs_next, acts, rews, done

    def get_redq_q_target_no_grad(self, obs_next_tensor, rews_tensor, done_tensor):
        with torch.no_grad():
            a_next, _, _, logp_next, _, _ = self.policy_net(obs_next_tensor)
            qs = torch.cat([q(torch.cat([obs_next_tensor, a_next], 1)) for q in self.q_net_list[:2]], 1)
            next_q = qs.min(dim=1, keepdim=True)[0] - self.alpha * logp_next
            y_q = rews_tensor + 0.99 * (1 - done_tensor) * next_q
        return y_q, None

    def train(self):
        for i_update in range(self.utd_ratio):
            obs_tensor, obs_next_tensor, acts_tensor, rews_tensor, done_tensor = self.sample_data(8)

            y_q, sample_idxs = self.get_redq_q_target_no_grad(obs_next_tensor, rews_tensor, done_tensor)
            q_prediction_list = []
            for q_i in range(self.num_Q):
                q_prediction = self.q_net_list[q_i](torch.cat([obs_tensor, acts_tensor], 1))
                q_prediction_list.append(q_prediction)
            q_prediction_cat = torch.cat(q_prediction_list, dim=1)
            y_q = y_q.expand((-1, self.num_Q)) if y_q.shape[1] == 1 else y_q
            q_loss_all = self.mse_criterion(q_prediction_cat, y_q) * self.num_Q

            for q_i in range(self.num_Q):
                self.q_optimizer_list[q_i].zero_grad()
            q_loss_all.backward()

            if ((i_update + 1) % self.policy_update_delay == 0) or i_update == self.utd_ratio - 1:
                a_tilda, mean_a_tilda, log_std_a_tilda, log_prob_a_tilda, _, pretanh = self.policy_net.forward(obs_tensor)
                q_a_tilda_list = []
                for sample_idx in range(self.num_Q):
                    self.q_net_list[sample_idx].requires_grad_(False)
                    q_a_tilda = self.q_net_list[sample_idx](torch.cat([obs_tensor, a_tilda], 1))
                    q_a_tilda_list.append(q_a_tilda)
                q_a_tilda_cat = torch.cat(q_a_tilda_list, 1)
                ave_q = torch.mean(q_a_tilda_cat, dim=1, keepdim=True)
                policy_loss = (self.alpha * log_prob_a_tilda - ave_q).mean()
                self.policy_optimizer.zero_grad()
                policy_loss.backward()
                for sample_idx in range(self.num_Q):
                    self.q_net_list[sample_idx].requires_grad_(True)

                alpha_loss = -(self.log_alpha * (log_prob_a_tilda + self.target_entropy).detach()).mean()
                self.alpha_optim.zero_grad()
                alpha_loss.backward()
                self.alpha_optim.step()
                self.alpha = self.log_alpha.exp().item()

            for q_i in range(self.num_Q):
                self.q_optimizer_list[q_i].step()
            if ((i_update + 1) % self.policy_update_delay == 0) or i_update == self.utd_ratio - 1:
                self.policy_optimizer.step()
        return policy_loss.detach(), q_loss_all.detach()


agent = REDQSACAgent()
policy_loss, q_loss = agent.train()
