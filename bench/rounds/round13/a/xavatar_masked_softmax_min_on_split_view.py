# label: hazard raises
# why: masked_softmax(mode='min') writes `vec[~mask] = 1` into a reshaped view of a torch.split output, which autograd forbids for multi-output views.
# source: https://github.com/Skype-line/X-Avatar/issues/12
import torch
import torch.nn as nn

torch.manual_seed(0)


def masked_softmax(vec, mask, dim=-1, mode='softmax', soft_blend=1):
    if mode == 'softmax':
        vec = torch.distributions.Bernoulli(logits=vec).probs
        masked_exps = torch.exp(soft_blend * vec) * mask.float()
        masked_exps_sum = masked_exps.sum(dim)
        output = torch.zeros_like(vec)
        output[masked_exps_sum > 0, :] = masked_exps[masked_exps_sum > 0, :] / masked_exps_sum[masked_exps_sum > 0].unsqueeze(-1)
        output = (output * vec).sum(dim, keepdim=True)
        value = torch.distributions.Bernoulli(probs=output).logits
        index = None
    elif mode == 'max':
        vec[~mask.bool()] = -100
        value, index = torch.max(vec, dim, keepdim=True)
    elif mode == 'min':
        vec[~mask.bool()] = 1  # <-- IPL001: in-place write into a view of a multi-output split that is in the graph
        value, index = torch.min(vec, dim, keepdim=True)
    else:
        raise NotImplementedError
    return value, index


class ImplicitNetwork(nn.Module):
    def __init__(self, d_in=3, d_out=1, d_feat=3, hidden=16):
        super().__init__()
        self.d_out = d_out
        self.d_feat = d_feat
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.Softplus(beta=100), nn.Linear(hidden, d_out + d_feat))

    def forward(self, x):
        out = self.net(x)
        return torch.split(out, [self.d_out, self.d_feat], dim=-1)


class XAvatarModel(nn.Module):
    def __init__(self, n_init=4):
        super().__init__()
        self.n_init = n_init
        self.shape_network = ImplicitNetwork()

    def forward(self, pts_c, mask, n_batch, n_point):
        shape_pd, color_pd = self.shape_network(pts_c)
        shape_pd = shape_pd.reshape(n_batch, n_point, self.n_init)
        color_pd = color_pd.reshape(n_batch, n_point, self.n_init, -1)
        shape_pd, index = masked_softmax(shape_pd, mask, dim=-1, mode='min')
        return shape_pd, color_pd, index


model = XAvatarModel()
n_batch, n_point, n_init = 2, 5, 4
pts_c = torch.randn(n_batch * n_point * n_init, 3)
mask = torch.rand(n_batch, n_point, n_init) > 0.3
shape_pd, color_pd, index = model(pts_c, mask, n_batch, n_point)
loss = shape_pd.abs().mean() + color_pd.pow(2).mean()
loss.backward()
