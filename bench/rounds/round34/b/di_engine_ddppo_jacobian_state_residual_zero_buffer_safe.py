# label: safe no-twin
# why: the DDPPO commit's _get_jacobian keeps the chunk view untouched: it writes the state residual into a fresh `null = torch.zeros_like(y)` buffer (`null[:, :, self.reward_size:] += state`) and adds it out of place (`y = y + null`); the scaler's `.data` updates and the `loss +=` accumulators touch nothing autograd saved. no-twin: StandardScaler.fit stores its statistics into the registered buffers in place by design, which an out-of-place rewrite would drop.
# source: https://github.com/opendilab/DI-engine/commit/06803b4e18fa64bbed0fd1d44952242c0c063b0f
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class StandardScaler(nn.Module):

    def __init__(self, input_size: int):
        super(StandardScaler, self).__init__()
        self.register_buffer('std', torch.ones(1, input_size))
        self.register_buffer('mu', torch.zeros(1, input_size))

    def fit(self, data: torch.Tensor):
        std, mu = torch.std_mean(data, dim=0, keepdim=True)
        std[std < 1e-12] = 1
        self.std.data.mul_(0.0).add_(std)
        self.mu.data.mul_(0.0).add_(mu)

    def transform(self, data: torch.Tensor):
        return (data - self.mu) / self.std


class EnsembleFC(nn.Module):

    def __init__(self, in_features: int, out_features: int, ensemble_size: int, weight_decay: float = 0.) -> None:
        super(EnsembleFC, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.ensemble_size = ensemble_size
        self.weight = nn.Parameter(torch.randn(ensemble_size, in_features, out_features) / (2 * math.sqrt(in_features)))
        self.weight_decay = weight_decay
        self.bias = nn.Parameter(torch.zeros(ensemble_size, 1, out_features))

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        assert input.shape[0] == self.ensemble_size and len(input.shape) == 3
        return torch.bmm(input, self.weight) + self.bias  # w times x + b


class EnsembleModel(nn.Module):

    def __init__(self, state_size, action_size, reward_size, ensemble_size, hidden_size=200, learning_rate=1e-3):
        super(EnsembleModel, self).__init__()
        self.hidden_size = hidden_size
        self.output_dim = state_size + reward_size
        self.nn1 = EnsembleFC(state_size + action_size, hidden_size, ensemble_size, weight_decay=0.000025)
        self.nn2 = EnsembleFC(hidden_size, hidden_size, ensemble_size, weight_decay=0.00005)
        self.nn3 = EnsembleFC(hidden_size, self.output_dim * 2, ensemble_size, weight_decay=0.0001)
        self.max_logvar = nn.Parameter(torch.ones(1, self.output_dim).float() * 0.5, requires_grad=False)
        self.min_logvar = nn.Parameter(torch.ones(1, self.output_dim).float() * -10, requires_grad=False)
        self.swish = Swish()
        self.optimizer = torch.optim.Adam(self.parameters(), lr=learning_rate)

    def forward(self, x: torch.Tensor, ret_log_var: bool = False):
        x = self.swish(self.nn1(x))
        x = self.swish(self.nn2(x))
        x = self.nn3(x)

        mean, logvar = x.chunk(2, dim=2)
        logvar = self.max_logvar - F.softplus(self.max_logvar - logvar)
        logvar = self.min_logvar + F.softplus(logvar - self.min_logvar)

        if ret_log_var:
            return mean, logvar
        else:
            return mean, torch.exp(logvar)

    def loss(self, mean: torch.Tensor, logvar: torch.Tensor, labels: torch.Tensor):
        inv_var = torch.exp(-logvar)
        mse_loss_inv = (torch.pow(mean - labels, 2) * inv_var).mean(dim=(1, 2))
        var_loss = logvar.mean(dim=(1, 2))
        with torch.no_grad():
            mse_loss = torch.pow(mean - labels, 2).mean(dim=(1, 2))
        total_loss = mse_loss_inv.sum() + var_loss.sum()
        return total_loss, mse_loss


class EnsembleGradientModel(EnsembleModel):

    def train(self, loss, loss_reg, reg):
        self.optimizer.zero_grad()

        loss += 0.01 * torch.sum(self.max_logvar) - 0.01 * torch.sum(self.min_logvar)
        loss += reg * loss_reg

        loss.backward()

        self.optimizer.step()


def get_batch_jacobian(net, x, noutputs):  # x: b, in dim, noutpouts: out dim
    x = x.unsqueeze(1)  # b, 1 ,in_dim
    n = x.size()[0]
    x = x.repeat(1, noutputs, 1)  # b, out_dim, in_dim
    x.requires_grad_(True)
    y = net(x)
    upstream_gradient = torch.eye(noutputs).reshape(1, noutputs, noutputs).repeat(n, 1, 1).to(x.device)
    re = torch.autograd.grad(y, x, upstream_gradient, create_graph=True)[0]

    return re


class DDPPOWorldModel:

    def __init__(self, state_size=3, action_size=2, reward_size=1, ensemble_size=2, k=3, reg=1.0):
        self.state_size = state_size
        self.action_size = action_size
        self.reward_size = reward_size
        self.ensemble_size = ensemble_size
        self.k = k
        self.reg = reg
        self.scaler = StandardScaler(state_size + action_size)
        self.gradient_model = EnsembleGradientModel(state_size, action_size, reward_size, ensemble_size, hidden_size=16)

    def _get_jacobian(self, model, train_input_reg):
        """
            train_input_reg: [ensemble_size, B, state_size+action_size]

            ret: [ensemble_size, B, state_size+reward_size, state_size+action_size]
        """

        def func(x):
            x = x.view(self.ensemble_size, -1, self.state_size + self.action_size)
            state = x[:, :, :self.state_size]
            x = self.scaler.transform(x)
            y, _ = model(x)
            # y[:, :, self.reward_size:] += state, inplace operation leads to error
            null = torch.zeros_like(y)
            null[:, :, self.reward_size:] += state
            y = y + null

            return y.view(-1, self.state_size + self.reward_size, self.state_size + self.reward_size)

        # reshape input
        train_input_reg = train_input_reg.view(-1, self.state_size + self.action_size)
        jacobian = get_batch_jacobian(func, train_input_reg, self.state_size + self.reward_size)

        # reshape jacobian
        return jacobian.view(self.ensemble_size, -1, self.state_size + self.reward_size, self.state_size + self.action_size)

    def train_step(self, train_input, train_label, train_input_reg, neighbor_input_distance, neighbor_label_distance):
        mean, logvar = self.gradient_model(train_input, ret_log_var=True)
        loss, mse_loss = self.gradient_model.loss(mean, logvar, train_label)

        jacobian = self._get_jacobian(self.gradient_model, train_input_reg).unsqueeze(2).repeat_interleave(self.k, dim=2)
        directional_derivative = (jacobian @ neighbor_input_distance.unsqueeze(-1)).squeeze(-1)
        loss_reg = torch.pow((neighbor_label_distance - directional_derivative), 2).sum(0).mean()  # sumed over network

        self.gradient_model.train(loss, loss_reg, self.reg)
        return mse_loss.mean().detach(), loss_reg.detach()


def main():
    wm = DDPPOWorldModel()
    S, A, R, E, B, k = 3, 2, 1, 2, 4, 3
    inputs = torch.randn(32, S + A)
    wm.scaler.fit(inputs)
    train_input = wm.scaler.transform(inputs[:B]).unsqueeze(0).repeat(E, 1, 1)
    train_label = torch.randn(E, B, S + R)
    train_input_reg = inputs[B:2 * B].unsqueeze(0).repeat(E, 1, 1)
    neighbor_input_distance = 0.1 * torch.randn(E, B, k, S + A)
    neighbor_label_distance = 0.1 * torch.randn(E, B, k, S + R)
    mse, reg = wm.train_step(train_input, train_label, train_input_reg, neighbor_input_distance, neighbor_label_distance)
    return mse, reg, wm.gradient_model.nn1.weight.detach().clone()


mse_loss, loss_reg, nn1_weight = main()
