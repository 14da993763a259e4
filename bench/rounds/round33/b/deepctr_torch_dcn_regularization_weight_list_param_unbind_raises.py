# label: hazard raises no-twin
# why: BaseModel.add_regularization_weight stores `list(weight_list)`; for a Parameter such as `dnn_linear.weight` or `crossnet.kernels` that list holds the unbind views of the parameter taken once at construction; `optim.step()` then updates the parameters in place, and the next `get_regularization_loss` reads those stale multi-output views, which autograd refuses (issue: "Output 0 of UnbindBackward is a view and its base ... has been modified inplace"). no-twin: the write is the optimizer's parameter update.
# source: https://github.com/shenweichen/DeepCTR-Torch/issues/130
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CrossNet(nn.Module):
    """The Cross Network part of Deep&Cross Network model (vector parameterization)."""

    def __init__(self, in_features, layer_num=2, seed=1024, device='cpu'):
        super(CrossNet, self).__init__()
        self.layer_num = layer_num
        self.kernels = nn.Parameter(torch.Tensor(self.layer_num, in_features, 1))
        self.bias = nn.Parameter(torch.Tensor(self.layer_num, in_features, 1))
        for i in range(self.kernels.shape[0]):
            nn.init.xavier_normal_(self.kernels[i])
        for i in range(self.bias.shape[0]):
            nn.init.zeros_(self.bias[i])
        self.to(device)

    def forward(self, inputs):
        x_0 = inputs.unsqueeze(2)
        x_l = x_0
        for i in range(self.layer_num):
            xl_w = torch.tensordot(x_l, self.kernels[i], dims=([1], [0]))
            dot_ = torch.matmul(x_0, xl_w)
            x_l = dot_ + self.bias[i] + x_l
        x_l = torch.squeeze(x_l, dim=2)
        return x_l


class BaseModel(nn.Module):
    def __init__(self, num_fields, vocab_size, embedding_size, l2_reg_linear=1e-5, l2_reg_embedding=1e-5, device='cpu'):
        super(BaseModel, self).__init__()
        self.device = device
        self.embedding_dict = nn.ModuleDict({f"C{i}": nn.Embedding(vocab_size, embedding_size) for i in range(num_fields)})
        self.linear_model = nn.ModuleDict({f"C{i}": nn.Embedding(vocab_size, 1) for i in range(num_fields)})
        for tensor in self.embedding_dict.values():
            nn.init.normal_(tensor.weight, mean=0, std=0.0001)

        self.regularization_weight = []

        self.add_regularization_weight(self.embedding_dict.parameters(), l2=l2_reg_embedding)
        self.add_regularization_weight(self.linear_model.parameters(), l2=l2_reg_linear)

        self.aux_loss = torch.zeros((1,), device=device)

    def input_from_feature_columns(self, X):
        return [self.embedding_dict[f"C{i}"](X[:, i:i + 1]) for i in range(len(self.embedding_dict))]

    def linear_logit(self, X):
        return sum(self.linear_model[f"C{i}"](X[:, i]) for i in range(len(self.linear_model)))

    def add_regularization_weight(self, weight_list, l2, p=2):
        self.regularization_weight.append((list(weight_list), l2, p))

    def get_regularization_loss(self, ):
        total_reg_loss = torch.zeros((1,), device=self.device)
        for weight_list, weight_decay, p in self.regularization_weight:
            weight_reg_loss = torch.zeros((1,), device=self.device)
            for w in weight_list:
                if isinstance(w, tuple):
                    l2_reg = torch.norm(w[1], p=p, )
                else:
                    l2_reg = torch.norm(w, p=p, )
                weight_reg_loss = weight_reg_loss + l2_reg
            reg_loss = weight_decay * weight_reg_loss
            total_reg_loss += reg_loss
        return total_reg_loss

    def compile(self, optimizer, loss=None):
        self.optim = torch.optim.Adam(self.parameters(), lr=1e-2) if optimizer == "adam" else optimizer
        self.loss_func = F.binary_cross_entropy

    def fit(self, x, y, batch_size=8, epochs=2):
        model = self.train()
        loss_func = self.loss_func
        optim = self.optim
        history = []
        for epoch in range(epochs):
            for start in range(0, x.shape[0], batch_size):
                x_batch, y_batch = x[start:start + batch_size], y[start:start + batch_size]
                y_pred = model(x_batch).squeeze()

                optim.zero_grad()
                loss = loss_func(y_pred, y_batch.squeeze(), reduction='sum')
                reg_loss = self.get_regularization_loss()

                total_loss = loss + reg_loss + self.aux_loss

                total_loss.backward()
                optim.step()  # <-- IPL002
                history.append(total_loss.detach().reshape(()))
        return torch.stack(history)


class DCN(BaseModel):
    def __init__(self, num_fields=3, vocab_size=10, embedding_size=4, cross_num=2, dnn_hidden_units=(16, 8),
                 l2_reg_linear=0.00001, l2_reg_embedding=0.00001, l2_reg_cross=0.00001, l2_reg_dnn=0.001, device='cpu'):
        super(DCN, self).__init__(num_fields, vocab_size, embedding_size, l2_reg_linear=l2_reg_linear,
                                  l2_reg_embedding=l2_reg_embedding, device=device)
        input_dim = num_fields * embedding_size
        self.dnn = nn.Sequential(nn.Linear(input_dim, dnn_hidden_units[0]), nn.ReLU(),
                                 nn.Linear(dnn_hidden_units[0], dnn_hidden_units[1]), nn.ReLU())
        self.dnn_linear = nn.Linear(input_dim + dnn_hidden_units[-1], 1, bias=False)
        self.crossnet = CrossNet(in_features=input_dim, layer_num=cross_num, device=device)
        self.add_regularization_weight(
            filter(lambda x: 'weight' in x[0] and 'bn' not in x[0], self.dnn.named_parameters()), l2=l2_reg_dnn)
        self.add_regularization_weight(self.dnn_linear.weight, l2=l2_reg_linear)
        self.add_regularization_weight(self.crossnet.kernels, l2=l2_reg_cross)
        self.to(device)

    def forward(self, X):
        logit = self.linear_logit(X)
        sparse_embedding_list = self.input_from_feature_columns(X)
        dnn_input = torch.cat(sparse_embedding_list, dim=-1).flatten(start_dim=1)
        deep_out = self.dnn(dnn_input)
        cross_out = self.crossnet(dnn_input)
        stack_out = torch.cat((cross_out, deep_out), dim=-1)
        logit += self.dnn_linear(stack_out)
        y_pred = torch.sigmoid(logit)
        return y_pred


def main():
    model = DCN()
    model.compile("adam", "binary_crossentropy")
    x = torch.randint(0, 10, (32, 3))
    y = (x.sum(dim=1, keepdim=True) > 13).float()
    history = model.fit(x, y, batch_size=8, epochs=2)
    return history, model.crossnet.kernels.detach().clone()


history, kernels = main()
