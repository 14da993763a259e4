# label: hazard raises
# why: encode_text normalises the prompt embeddings with `/=` right after taking their norm, so the in-place division overwrites the tensor that norm saved for backward while the prompts are being trained
# source: https://github.com/caoyunkang/AdaCLIP/issues/2 (fixed in https://github.com/caoyunkang/AdaCLIP/pull/46)
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class ToyCLIP(nn.Module):
    def __init__(self, vocab=50, width=8, embed_dim=6, prompt_length=2):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, width)
        self.static_prompts = nn.Parameter(torch.randn(prompt_length, width) * 0.02)  # learnable text prompts
        self.text_projection = nn.Parameter(torch.randn(width, embed_dim) * width ** -0.5)

    def encode_text(self, text):
        x = self.token_embedding(text)  # [n, ctx, width]
        x = torch.cat([x[:, :1], self.static_prompts.unsqueeze(0).expand(x.shape[0], -1, -1), x[:, 1:]], dim=1)
        x = x.mean(dim=1)
        return x @ self.text_projection


class TextEmbebddingLayer(nn.Module):
    def __init__(self, fixed):
        super(TextEmbebddingLayer, self).__init__()
        self.ensemble_text_features = {}
        self.prompt_normal = ['{}', 'flawless {}', 'perfect {}']
        self.prompt_abnormal = ['damaged {}', 'broken {}']
        self.prompt_state = [self.prompt_normal, self.prompt_abnormal]
        self.prompt_templates = ['a bad photo of a {}.', 'a cropped photo of the {}.']
        self.fixed = fixed

    def tokenize(self, texts, context_length=6):
        result = torch.zeros(len(texts), context_length, dtype=torch.long)
        for i, text in enumerate(texts):
            tokens = [1] + [sum(map(ord, w)) % 47 + 3 for w in text.split()] + [2]
            tokens = tokens[:context_length]
            result[i, :len(tokens)] = torch.tensor(tokens)
        return result

    def forward(self, model, texts, device):
        text_feature_list = []
        for indx, text in enumerate(texts):
            if self.fixed:
                if self.ensemble_text_features.get(text) is None:
                    text_features = self.encode_text(model, text, device)
                    self.ensemble_text_features[text] = text_features
                else:
                    text_features = self.ensemble_text_features[text]
            else:
                text_features = self.encode_text(model, text, device)
                self.ensemble_text_features[text] = text_features
            text_feature_list.append(text_features)
        text_features = torch.stack(text_feature_list, dim=0)
        text_features = F.normalize(text_features, dim=1)
        return text_features

    def encode_text(self, model, text, device):
        text_features = []
        for i in range(len(self.prompt_state)):
            text = text.replace('-', ' ')
            prompted_state = [state.format(text) for state in self.prompt_state[i]]
            prompted_sentence = []
            for s in prompted_state:
                for template in self.prompt_templates:
                    prompted_sentence.append(template.format(s))
            prompted_sentence = self.tokenize(prompted_sentence).to(device)

            class_embeddings = model.encode_text(prompted_sentence)

            class_embeddings /= class_embeddings.norm(dim=-1, keepdim=True)  # <-- IPL001: divides the tensor norm just saved for backward
            class_embedding = class_embeddings.mean(dim=0)
            class_embedding /= class_embedding.norm()  # <-- IPL001: same for the averaged embedding
            text_features.append(class_embedding)
        text_features = torch.stack(text_features, dim=1)
        return text_features


clip_model = ToyCLIP()
text_layer = TextEmbebddingLayer(fixed=False)
text_features = text_layer(clip_model, ['metal nut', 'screw'], 'cpu')  # [B, C, 2]
patch_tokens = F.normalize(torch.randn(2, 5, 6), dim=-1)
anomaly_map = torch.softmax(100.0 * patch_tokens @ text_features, dim=-1)
gt = torch.randint(0, 2, (2, 5))
loss = F.nll_loss(torch.log(anomaly_map + 1e-8).reshape(-1, 2), gt.reshape(-1))
loss.backward()
