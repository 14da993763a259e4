# label: safe
# why: squeeze_/unsqueeze_ only reshape the value head's Linear output in place; no op has saved that tensor, so the metadata change cannot disturb backward
# source: https://github.com/kengz/SLM-Lab/commit/38b8cabbd2cced8dc771d13bc30fa3115f012c5b
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLPNet(nn.Module):
    '''Shared body with multiple tails: [policy logits, state value]'''

    def __init__(self, in_dim, hid_dim, out_dims):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(in_dim, hid_dim), nn.ReLU(), nn.Linear(hid_dim, hid_dim), nn.ReLU())
        self.model_tails = nn.ModuleList([nn.Linear(hid_dim, d) for d in out_dims])
        self.loss_fn = nn.MSELoss()

    def forward(self, x):
        x = self.model(x)
        return [tail(x) for tail in self.model_tails]


class ActorCritic:
    def __init__(self, net, val_loss_coef=0.5, entropy_coef=0.01, gamma=0.99):
        self.net = net
        self.shared = True
        self.val_loss_coef = val_loss_coef
        self.entropy_coef = entropy_coef
        self.gamma = gamma

    def calc_pdparam(self, x):
        out = self.net(x)
        return out[0]

    def calc_v(self, x):
        '''Forward-pass to calculate the predicted state-value from critic_net.'''
        out = self.net(x)
        v = out[-1].squeeze_(dim=1)  # get value only
        return v

    def calc_ret_advs(self, batch, v_preds):
        rets = torch.zeros_like(batch['rewards'])
        future_ret = torch.tensor(0.0)
        for t in reversed(range(len(rets))):
            future_ret = batch['rewards'][t] + self.gamma * future_ret * (1 - batch['dones'][t])
            rets[t] = future_ret
        advs = rets - v_preds.detach()
        return rets, advs

    def calc_policy_loss(self, batch, pdparams, advs):
        dist = torch.distributions.Categorical(logits=pdparams)
        log_probs = dist.log_prob(batch['actions'])
        policy_loss = -(log_probs * advs).mean()
        policy_loss = policy_loss - self.entropy_coef * dist.entropy().mean()
        return policy_loss

    def calc_val_loss(self, batch, v_targets):
        '''Calculate the critic's value loss'''
        v_targets = v_targets.unsqueeze(dim=-1)
        v_preds = self.calc_v(batch['states']).unsqueeze_(dim=-1)
        assert v_preds.shape == v_targets.shape
        val_loss = self.val_loss_coef * self.net.loss_fn(v_preds, v_targets)
        return val_loss

    def train(self, batch, optim):
        pdparams = self.calc_pdparam(batch['states'])
        v_preds = self.calc_v(batch['states'])
        rets, advs = self.calc_ret_advs(batch, v_preds)
        policy_loss = self.calc_policy_loss(batch, pdparams, advs)
        val_loss = self.calc_val_loss(batch, rets)
        loss = policy_loss + val_loss
        optim.zero_grad()
        loss.backward()
        return loss


net = MLPNet(4, 16, [2, 1])
algo = ActorCritic(net)
optim = torch.optim.SGD(net.parameters(), lr=0.01)
batch = {
    'states': torch.randn(6, 4),
    'actions': torch.randint(0, 2, (6,)),
    'rewards': torch.ones(6),
    'dones': torch.tensor([0., 0., 1., 0., 0., 1.]),
}
loss = algo.train(batch, optim)
