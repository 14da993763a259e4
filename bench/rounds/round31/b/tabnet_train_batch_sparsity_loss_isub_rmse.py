# label: hazard raises
# why: TabModel._train_batch subtracts the sparsity regulariser with `loss -= self.lambda_sparse * M_loss`; with a user loss_fn such as RMSE the loss is the output of torch.sqrt, which SqrtBackward saves, so the in-place subtraction makes loss.backward() fail.
# source: https://github.com/dreamquark-ai/tabnet/pull/323
import torch
import torch.nn.functional as F
from torch.nn import BatchNorm1d, Linear, ReLU

torch.manual_seed(0)


class GLU_Layer(torch.nn.Module):
    def __init__(self, input_dim, output_dim, fc=None):
        super().__init__()
        self.output_dim = output_dim
        self.fc = fc if fc is not None else Linear(input_dim, 2 * output_dim, bias=False)
        self.bn = BatchNorm1d(2 * output_dim, momentum=0.01)

    def forward(self, x):
        x = self.bn(self.fc(x))
        return torch.mul(x[:, : self.output_dim], torch.sigmoid(x[:, self.output_dim:]))


class FeatTransformer(torch.nn.Module):
    def __init__(self, input_dim, output_dim, shared_layers):
        super().__init__()
        self.shared = GLU_Layer(input_dim, output_dim, fc=shared_layers[0])
        self.specifics = GLU_Layer(output_dim, output_dim)

    def forward(self, x):
        x = self.shared(x)
        x = (x + self.specifics(x)) * torch.sqrt(torch.tensor(0.5))
        return x


class AttentiveTransformer(torch.nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.fc = Linear(input_dim, output_dim, bias=False)
        self.bn = BatchNorm1d(output_dim, momentum=0.01)

    def forward(self, priors, processed_feat):
        x = self.bn(self.fc(processed_feat))
        x = torch.mul(x, priors)
        return torch.softmax(x, dim=-1)


class TabNetEncoder(torch.nn.Module):
    def __init__(self, input_dim, n_d=8, n_a=8, n_steps=3, gamma=1.3, epsilon=1e-15):
        super().__init__()
        self.input_dim = input_dim
        self.n_d = n_d
        self.n_steps = n_steps
        self.gamma = gamma
        self.epsilon = epsilon
        self.initial_bn = BatchNorm1d(self.input_dim, momentum=0.01)
        shared_feat_transform = torch.nn.ModuleList([Linear(self.input_dim, 2 * (n_d + n_a), bias=False)])
        self.initial_splitter = FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform)
        self.feat_transformers = torch.nn.ModuleList()
        self.att_transformers = torch.nn.ModuleList()
        for step in range(n_steps):
            self.feat_transformers.append(FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform))
            self.att_transformers.append(AttentiveTransformer(n_a, self.input_dim))

    def forward(self, x, prior=None):
        x = self.initial_bn(x)
        if prior is None:
            prior = torch.ones(x.shape).to(x.device)

        M_loss = 0
        att = self.initial_splitter(x)[:, self.n_d:]

        steps_output = []
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            M_loss += torch.mean(
                torch.sum(torch.mul(M, torch.log(M + self.epsilon)), dim=1)
            )
            # update prior
            prior = torch.mul(self.gamma - M, prior)
            # output
            masked_x = torch.mul(M, x)
            out = self.feat_transformers[step](masked_x)
            d = ReLU()(out[:, : self.n_d])
            steps_output.append(d)
            # update attention
            att = out[:, self.n_d:]

        M_loss /= self.n_steps
        return steps_output, M_loss


class TabNetNoEmbeddings(torch.nn.Module):
    def __init__(self, input_dim, output_dim, n_d=8, n_a=8, n_steps=3):
        super().__init__()
        self.encoder = TabNetEncoder(input_dim, n_d=n_d, n_a=n_a, n_steps=n_steps)
        self.final_mapping = Linear(n_d, output_dim, bias=False)

    def forward(self, x):
        res = 0
        steps_output, M_loss = self.encoder(x)
        res = torch.sum(torch.stack(steps_output, dim=0), dim=0)
        out = self.final_mapping(res)
        return out, M_loss


class TabNetRegressor:
    def __init__(self, input_dim, output_dim, loss_fn=None, lambda_sparse=1e-3, clip_value=None):
        self.device = "cpu"
        self.network = TabNetNoEmbeddings(input_dim, output_dim)
        self.loss_fn = loss_fn if loss_fn is not None else F.mse_loss
        self.lambda_sparse = lambda_sparse
        self.clip_value = clip_value
        self._optimizer = torch.optim.Adam(self.network.parameters(), lr=2e-2)

    def compute_loss(self, y_pred, y_true):
        return self.loss_fn(y_pred, y_true)

    def _train_batch(self, X, y):
        batch_logs = {"batch_size": X.shape[0]}

        X = X.to(self.device).float()
        y = y.to(self.device).float()

        for param in self.network.parameters():
            param.grad = None

        output, M_loss = self.network(X)

        loss = self.compute_loss(output, y)
        # Add the overall sparsity loss
        loss -= self.lambda_sparse * M_loss  # <-- IPL001

        # Perform backward pass and optimization
        loss.backward()
        if self.clip_value:
            torch.nn.utils.clip_grad_norm_(self.network.parameters(), self.clip_value)
        self._optimizer.step()

        batch_logs["loss"] = loss.cpu().detach().item()
        return batch_logs


def my_rmse_loss(y_pred, y_true):
    return torch.sqrt(F.mse_loss(y_pred, y_true))


def main():
    X = torch.randn(32, 6)
    y = X[:, :1] * 2.0 - X[:, 1:2]
    model = TabNetRegressor(input_dim=6, output_dim=1, loss_fn=my_rmse_loss)
    logs = model._train_batch(X, y)
    final_weight = model.network.final_mapping.weight.detach().clone()
    return torch.tensor(logs["loss"]), final_weight


loss, final_weight = main()
