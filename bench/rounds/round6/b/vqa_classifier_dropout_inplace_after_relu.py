# label: hazard raises
# why: nn.Dropout(inplace=True) right after nn.ReLU() rewrites the ReLU output that ReLU saved for its backward
# source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6 (classifier.py SimpleClassifier: "nn.Dropout(dropout, inplace=True) should be modified by nn.Dropout(dropout, inplace=False)")
import torch
import torch.nn as nn
from torch.nn.utils.weight_norm import weight_norm

torch.manual_seed(0)


class FCNet(nn.Module):
    """Simple class for non-linear fully connect network"""

    def __init__(self, dims):
        super(FCNet, self).__init__()
        layers = []
        for i in range(len(dims) - 1):
            in_dim = dims[i]
            out_dim = dims[i + 1]
            layers.append(weight_norm(nn.Linear(in_dim, out_dim), dim=None))
            layers.append(nn.ReLU())
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super(SimpleClassifier, self).__init__()
        layers = [
            weight_norm(nn.Linear(in_dim, hid_dim), dim=None),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=True),  # <-- IPL001: rewrites the output the preceding ReLU saved
            weight_norm(nn.Linear(hid_dim, out_dim), dim=None)
        ]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        logits = self.main(x)
        return logits


class NewAttention(nn.Module):
    def __init__(self, v_dim, q_dim, num_hid, dropout=0.2):
        super(NewAttention, self).__init__()
        self.v_proj = FCNet([v_dim, num_hid])
        self.q_proj = FCNet([q_dim, num_hid])
        self.dropout = nn.Dropout(dropout)
        self.linear = weight_norm(nn.Linear(num_hid, 1), dim=None)

    def forward(self, v, q):
        batch, k, _ = v.size()
        v_proj = self.v_proj(v)  # [batch, k, qdim]
        q_proj = self.q_proj(q).unsqueeze(1).repeat(1, k, 1)
        joint_repr = v_proj * q_proj
        joint_repr = self.dropout(joint_repr)
        logits = self.linear(joint_repr)
        return nn.functional.softmax(logits, 1)


class BaseModel(nn.Module):
    def __init__(self, q_emb, v_att, q_net, v_net, classifier):
        super(BaseModel, self).__init__()
        self.q_emb = q_emb
        self.v_att = v_att
        self.q_net = q_net
        self.v_net = v_net
        self.classifier = classifier

    def forward(self, v, q_tokens):
        q_emb = self.q_emb(q_tokens).mean(1)  # [batch, q_dim]
        att = self.v_att(v, q_emb)
        v_emb = (att * v).sum(1)  # [batch, v_dim]
        q_repr = self.q_net(q_emb)
        v_repr = self.v_net(v_emb)
        joint_repr = q_repr * v_repr
        logits = self.classifier(joint_repr)
        return logits


num_hid = 8
model = BaseModel(
    q_emb=nn.Embedding(20, 6),
    v_att=NewAttention(10, 6, num_hid),
    q_net=FCNet([6, num_hid]),
    v_net=FCNet([10, num_hid]),
    classifier=SimpleClassifier(num_hid, num_hid * 2, 5, 0.5),
)
model.train()
v = torch.randn(3, 4, 10)
q = torch.randint(0, 20, (3, 7))
answers = torch.rand(3, 5)
pred = model(v, q)
loss = nn.functional.binary_cross_entropy_with_logits(pred, answers) * answers.size(1)
loss.backward()
