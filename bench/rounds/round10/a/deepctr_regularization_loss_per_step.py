# label: safe
# why: the fixed DeepCTR-Torch recomputes the regularization loss from the stored weights inside every step, so optim.step() only touches weights whose graph has already been consumed
# source: https://github.com/shenweichen/DeepCTR-Torch/blob/025be4fb588c4e906f796f0141fd4ae4d4f2e82a/deepctr_torch/models/basemodel.py (fix for https://github.com/shenweichen/DeepCTR-Torch/issues/88)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1024)


class SparseFeat:
    def __init__(self, name, vocabulary_size, embedding_dim=4):
        self.name = name
        self.embedding_name = name
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim


def create_embedding_matrix(feature_columns, init_std=0.0001):
    embedding_dict = nn.ModuleDict(
        {feat.embedding_name: nn.Embedding(feat.vocabulary_size, feat.embedding_dim)
         for feat in feature_columns})
    for tensor in embedding_dict.values():
        nn.init.normal_(tensor.weight, mean=0, std=init_std)
    return embedding_dict


class BaseModel(nn.Module):
    def __init__(self, dnn_feature_columns, l2_reg_embedding=1e-1, l2_reg_dnn=1e-1):
        super(BaseModel, self).__init__()
        self.dnn_feature_columns = dnn_feature_columns
        self.aux_loss = torch.zeros((1,))
        self.feature_index = {feat.name: i for i, feat in enumerate(dnn_feature_columns)}
        self.embedding_dict = create_embedding_matrix(dnn_feature_columns, init_std=0.1)
        dim = sum(feat.embedding_dim for feat in dnn_feature_columns)
        self.dnn = nn.Sequential(nn.Linear(dim, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
        self.regularization_weight = []
        self.add_regularization_weight(self.embedding_dict.parameters(), l2_reg_embedding)
        self.add_regularization_weight(
            [p for n, p in self.dnn.named_parameters() if 'weight' in n], l2_reg_dnn)

    def add_regularization_weight(self, weight_list, weight_decay, p=2):
        self.regularization_weight.append((list(weight_list), weight_decay, p))

    def get_regularization_loss(self, ):
        total_reg_loss = torch.zeros((1,))
        for weight_list, weight_decay, p in self.regularization_weight:
            weight_reg_loss = torch.zeros((1,))
            for w in weight_list:
                l2_reg = torch.norm(w, p=p, )
                weight_reg_loss = weight_reg_loss + l2_reg
            reg_loss = weight_decay * weight_reg_loss
            total_reg_loss += reg_loss
        return total_reg_loss

    def forward(self, X):
        sparse_embedding_list = [self.embedding_dict[feat.embedding_name](
            X[:, self.feature_index[feat.name]].long()) for feat in self.dnn_feature_columns]
        dnn_input = torch.cat(sparse_embedding_list, dim=-1)
        return torch.sigmoid(self.dnn(dnn_input))

    def compile(self, lr=0.05):
        self.optim = torch.optim.Adagrad(self.parameters(), lr=lr)
        self.loss_func = F.binary_cross_entropy

    def fit(self, x, y, batch_size=8, epochs=1):
        model = self.train()
        loss_func = self.loss_func
        optim = self.optim
        history = []
        for epoch in range(epochs):
            for index in range(0, x.shape[0], batch_size):
                x_train = x[index:index + batch_size].float()
                y_train = y[index:index + batch_size].float()
                y_pred = model(x_train).squeeze()
                optim.zero_grad()
                loss = loss_func(y_pred, y_train.squeeze(), reduction='sum')
                reg_loss = self.get_regularization_loss()
                total_loss = loss + reg_loss + self.aux_loss
                total_loss.backward()
                optim.step()
                history.append(total_loss.item())
        return history


feature_columns = [SparseFeat('C1', 10), SparseFeat('C2', 7), SparseFeat('C3', 5)]
x = torch.stack([torch.randint(0, 10, (32,)), torch.randint(0, 7, (32,)),
                 torch.randint(0, 5, (32,))], dim=1)
y = torch.randint(0, 2, (32,)).float()

model = BaseModel(feature_columns)
model.compile()
history = model.fit(x, y, batch_size=8, epochs=1)
final_loss = torch.tensor(history)
