# label: hazard silent
# why: the classifier MLP begins with nn.ReLU(inplace=True), so computing logits clamps the shared embeddings tensor in place and the metric loss computed afterwards sees (and backpropagates through) ReLU'd embeddings.
# source: https://github.com/KevinMusgrave/powerful-benchmarker/issues/78
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    # layer_sizes[0] is the dimension of the input
    # layer_sizes[-1] is the dimension of the output
    def __init__(self, layer_sizes, final_relu=False):
        super().__init__()
        layer_list = []
        layer_sizes = [int(x) for x in layer_sizes]
        num_layers = len(layer_sizes) - 1
        final_relu_layer = num_layers if final_relu else num_layers - 1
        for i in range(len(layer_sizes) - 1):
            input_size = layer_sizes[i]
            curr_size = layer_sizes[i + 1]
            if i < final_relu_layer:
                layer_list.append(nn.ReLU(inplace=True))  # <-- IPL002: the first ReLU clamps the caller's input tensor
            layer_list.append(nn.Linear(input_size, curr_size))
        self.net = nn.Sequential(*layer_list)
        self.last_linear = self.net[-1]

    def forward(self, x):
        return self.net(x)


def contrastive_loss(embeddings, labels, pos_margin=0.0, neg_margin=0.5):
    embeddings = F.normalize(embeddings, p=2, dim=1)
    dist = torch.cdist(embeddings, embeddings)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    eye = torch.eye(len(labels), dtype=torch.bool)
    pos = F.relu(dist - pos_margin)[same & ~eye]
    neg = F.relu(neg_margin - dist)[~same]
    return pos.mean() + neg.mean()


class TrainWithClassifier:
    def __init__(self, models, loss_weights):
        self.models = models
        self.loss_weights = loss_weights
        self.losses = {}

    def compute_embeddings_and_logits(self, data):
        trunk_output = self.models["trunk"](data)
        embeddings = self.models["embedder"](trunk_output)
        logits = self.models["classifier"](embeddings)
        return embeddings, logits

    def calculate_loss(self, curr_batch):
        data, labels = curr_batch
        embeddings, logits = self.compute_embeddings_and_logits(data)
        self.losses["metric_loss"] = contrastive_loss(embeddings, labels)
        self.losses["classifier_loss"] = F.cross_entropy(logits, labels)
        return sum(self.losses[k] * self.loss_weights[k] for k in self.losses)


models = {
    "trunk": nn.Sequential(nn.Linear(12, 16), nn.Tanh()),
    "embedder": MLP([16, 8]),
    "classifier": MLP([8, 8, 3]),
}
trainer = TrainWithClassifier(models, {"metric_loss": 1.0, "classifier_loss": 0.5})
data = torch.randn(10, 12)
labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
total_loss = trainer.calculate_loss((data, labels))
total_loss.backward()
metric_loss = trainer.losses["metric_loss"].detach()
