# label: safe
# why: ConvE adds the per-entity bias with `x += self.b.expand_as(x)` into the fresh output of torch.mm, which mm's backward does not need (it saves its inputs), so the in-place add keeps the knowledge-graph scoring gradients correct.
# source: https://github.com/graph4ai/graph4nlp/blob/c5b6513d72443837016b804ff3aad941fd29db92/examples/pytorch/kg_completion/model.py (ConvE.forward)
import torch
import torch.nn.functional as F
from torch.nn import Parameter
from torch.nn.init import xavier_normal_

torch.manual_seed(0)


class Args:
    embedding_dim = 20
    embedding_shape1 = 4
    use_bias = True
    input_drop = 0.0
    hidden_drop = 0.0
    feat_drop = 0.0
    hidden_size = 32 * 6 * 3


class ConvE(torch.nn.Module):
    def __init__(self, args, num_entities, num_relations):
        super(ConvE, self).__init__()
        self.emb_e = torch.nn.Embedding(num_entities, args.embedding_dim, padding_idx=0)
        self.emb_rel = torch.nn.Embedding(num_relations, args.embedding_dim, padding_idx=0)
        self.inp_drop = torch.nn.Dropout(args.input_drop)
        self.hidden_drop = torch.nn.Dropout(args.hidden_drop)
        self.feature_map_drop = torch.nn.Dropout2d(args.feat_drop)
        self.loss = torch.nn.BCELoss()
        self.emb_dim1 = args.embedding_shape1
        self.emb_dim2 = args.embedding_dim // self.emb_dim1
        self.conv1 = torch.nn.Conv2d(1, 32, (3, 3), 1, 0, bias=args.use_bias)
        self.bn0 = torch.nn.BatchNorm2d(1)
        self.bn1 = torch.nn.BatchNorm2d(32)
        self.bn2 = torch.nn.BatchNorm1d(args.embedding_dim)
        self.register_parameter("b", Parameter(torch.zeros(num_entities)))
        self.fc = torch.nn.Linear(args.hidden_size, args.embedding_dim)

    def init(self):
        xavier_normal_(self.emb_e.weight.data)
        xavier_normal_(self.emb_rel.weight.data)

    def forward(self, e1, rel, kg_graph=None):
        e1_embedded = self.emb_e(e1).view(-1, 1, self.emb_dim1, self.emb_dim2)
        rel_embedded = self.emb_rel(rel).view(-1, 1, self.emb_dim1, self.emb_dim2)
        stacked_inputs = torch.cat([e1_embedded, rel_embedded], 2)
        stacked_inputs = self.bn0(stacked_inputs)
        x = self.inp_drop(stacked_inputs)
        x = self.conv1(x)
        x = self.bn1(x)
        x = F.relu(x)
        x = self.feature_map_drop(x)
        x = x.view(x.shape[0], -1)
        x = self.fc(x)
        x = self.hidden_drop(x)
        x = self.bn2(x)
        x = F.relu(x)
        x = torch.mm(x, self.emb_e.weight.transpose(1, 0))
        x += self.b.expand_as(x)
        pred = torch.sigmoid(x)
        return pred


def main():
    num_entities, num_relations = 30, 5
    model = ConvE(Args(), num_entities, num_relations)
    model.init()
    e1 = torch.randint(1, num_entities, (8, 1))
    rel = torch.randint(1, num_relations, (8, 1))
    targets = torch.zeros(8, num_entities)
    targets[torch.arange(8), torch.randint(1, num_entities, (8,))] = 1.0
    pred = model(e1, rel)
    loss = model.loss(pred, targets)
    loss.backward()
    return loss.detach(), model.b.grad, model.emb_e.weight.grad, model.conv1.weight.grad


loss, b_grad, emb_grad, conv_grad = main()
