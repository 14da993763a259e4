# label: hazard raises
# why: with `gcn.skip_connection = True` (mp_detach config) RGL.forward does `next_H = relu(...)` and then `next_H += H`, overwriting the ReLU output that ReluBackward saved, so the value estimator's loss.backward() in optimize_epoch fails.
# source: https://github.com/ChanganVR/RelationalGraphLearning/issues/25
import torch
import torch.nn as nn
from torch.nn import Parameter
from torch.nn.functional import relu, softmax
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


def mlp(input_dim, mlp_dims, last_relu=False):
    layers = []
    mlp_dims = [input_dim] + mlp_dims
    for i in range(len(mlp_dims) - 1):
        layers.append(nn.Linear(mlp_dims[i], mlp_dims[i + 1]))
        if i != len(mlp_dims) - 2 or last_relu:
            layers.append(nn.ReLU())
    net = nn.Sequential(*layers)
    return net


class Config(object):
    class gcn:
        multiagent_training = True
        num_layer = 2
        X_dim = 32
        wr_dims = [64, 32]
        wh_dims = [64, 32]
        final_state_dim = 32
        similarity_function = 'embedded_gaussian'
        layerwise_graph = False
        skip_connection = True

    class model_predictive_rl:
        value_network_dims = [32, 100, 100, 1]


class RGL(nn.Module):
    def __init__(self, config, robot_state_dim, human_state_dim):
        super().__init__()
        self.multiagent_training = config.gcn.multiagent_training
        num_layer = config.gcn.num_layer
        X_dim = config.gcn.X_dim
        wr_dims = config.gcn.wr_dims
        wh_dims = config.gcn.wh_dims
        final_state_dim = config.gcn.final_state_dim
        similarity_function = config.gcn.similarity_function
        layerwise_graph = config.gcn.layerwise_graph
        skip_connection = config.gcn.skip_connection

        self.similarity_function = similarity_function
        self.robot_state_dim = robot_state_dim
        self.human_state_dim = human_state_dim
        self.num_layer = num_layer
        self.X_dim = X_dim
        self.layerwise_graph = layerwise_graph
        self.skip_connection = skip_connection

        self.w_r = mlp(robot_state_dim, wr_dims, last_relu=True)
        self.w_h = mlp(human_state_dim, wh_dims, last_relu=True)

        if self.similarity_function == 'embedded_gaussian':
            self.w_a = Parameter(torch.randn(self.X_dim, self.X_dim))

        embedding_dim = self.X_dim
        self.Ws = torch.nn.ParameterList()
        for i in range(self.num_layer):
            if i == 0:
                self.Ws.append(Parameter(torch.randn(self.X_dim, embedding_dim)))
            elif i == self.num_layer - 1:
                self.Ws.append(Parameter(torch.randn(embedding_dim, final_state_dim)))
            else:
                self.Ws.append(Parameter(torch.randn(embedding_dim, embedding_dim)))

        # for visualization
        self.A = None

    def compute_similarity_matrix(self, X):
        if self.similarity_function == 'embedded_gaussian':
            A = torch.matmul(torch.matmul(X, self.w_a), X.permute(0, 2, 1))
            normalized_A = softmax(A, dim=2)
        elif self.similarity_function == 'gaussian':
            A = torch.matmul(X, X.permute(0, 2, 1))
            normalized_A = softmax(A, dim=2)
        else:
            raise NotImplementedError
        return normalized_A

    def forward(self, state):
        robot_state, human_states = state

        # compute feature matrix X
        robot_state_embedings = self.w_r(robot_state)
        human_state_embedings = self.w_h(human_states)
        X = torch.cat([robot_state_embedings, human_state_embedings], dim=1)

        # compute matrix A
        if not self.layerwise_graph:
            normalized_A = self.compute_similarity_matrix(X)
            self.A = normalized_A[0, :, :].data.cpu()

        next_H = H = X
        for i in range(self.num_layer):
            if self.layerwise_graph:
                A = self.compute_similarity_matrix(H)
                next_H = relu(torch.matmul(torch.matmul(A, H), self.Ws[i]))
            else:
                next_H = relu(torch.matmul(torch.matmul(normalized_A, H), self.Ws[i]))

            if self.skip_connection:
                next_H += H  # <-- IPL001
            H = next_H

        return next_H


class ValueEstimator(nn.Module):
    def __init__(self, config, graph_model):
        super().__init__()
        self.graph_model = graph_model
        self.value_network = mlp(config.gcn.X_dim, config.model_predictive_rl.value_network_dims)

    def forward(self, state):
        assert len(state[0].shape) == 3
        assert len(state[1].shape) == 3
        # only use the feature of robot node as state representation
        state_embedding = self.graph_model(state)[:, 0, :]
        value = self.value_network(state_embedding)
        return value


class ReplayMemory(Dataset):
    def __init__(self, n, human_num=5):
        self.robot_states = torch.randn(n, 1, 9)
        self.human_states = torch.randn(n, human_num, 5)
        self.values = torch.randn(n, 1)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, item):
        return self.robot_states[item], self.human_states[item], self.values[item]


class MPRLTrainer(object):
    def __init__(self, value_estimator, memory, batch_size):
        self.value_estimator = value_estimator
        self.criterion = nn.MSELoss()
        self.memory = memory
        self.data_loader = None
        self.batch_size = batch_size
        self.v_optimizer = torch.optim.Adam(self.value_estimator.parameters(), lr=1e-3)

    def optimize_epoch(self, num_epochs):
        if self.data_loader is None:
            self.data_loader = DataLoader(self.memory, self.batch_size, shuffle=False)
        epoch_v_loss = 0
        for epoch in range(num_epochs):
            for data in self.data_loader:
                robot_states, human_states, values = data

                # optimize value estimator
                self.v_optimizer.zero_grad()
                outputs = self.value_estimator((robot_states, human_states))
                loss = self.criterion(outputs, values)
                loss.backward()
                self.v_optimizer.step()
                epoch_v_loss += loss.data.item()
        return epoch_v_loss / len(self.memory)


def main():
    config = Config()
    graph_model = RGL(config, robot_state_dim=9, human_state_dim=5)
    value_estimator = ValueEstimator(config, graph_model)
    trainer = MPRLTrainer(value_estimator, ReplayMemory(16), batch_size=8)
    avg_loss = trainer.optimize_epoch(1)
    return torch.tensor(avg_loss), graph_model.Ws[0].detach().clone()


avg_loss, ws0 = main()
